// Inline media in a body, as each family sends them (src/policy/media.ts).
import { describe, expect, it } from "vitest";
import { estimate, estimateTokens } from "../../src/policy/estimate";
import { IMAGE_TOKENS, inlineMedia, MEDIA_SCAN_BYTES } from "../../src/policy/media";

const b64 = (n: number) => "iVBORw0KGgo".padEnd(n, "A");
const sized = (body: unknown) => ({ body, bytes: new TextEncoder().encode(JSON.stringify(body)).byteLength });
const image = b64(400_000);

/** The same picture as each family's body carries it. */
const BODIES: Record<string, unknown> = {
  // platform.openai.com/docs/guides/images-vision: chat's image_url with a data URL, the Responses API's input_image.
  "openai chat": { model: "gpt-4o", messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${image}`, detail: "high" } }] }] },
  "openai responses": { model: "gpt-4o", input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: `data:image/jpeg;base64,${image}` }] }] },
  // docs.anthropic.com/en/docs/build-with-claude/vision: a base64 source with its media_type.
  anthropic: { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: image } }, { type: "text", text: "what is this?" }] }] },
  // ai.google.dev/gemini-api/docs/image-understanding: inline_data (REST) or inlineData (SDKs).
  gemini: { contents: [{ parts: [{ inline_data: { mime_type: "image/png", data: image } }, { text: "what is this?" }] }] },
  "gemini camel": { contents: [{ parts: [{ inlineData: { mimeType: "image/webp", data: image } }, { text: "what is this?" }] }] },
  // docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageBlock.html: Converse's image, its source's bytes.
  "bedrock converse": { messages: [{ role: "user", content: [{ image: { format: "png", source: { bytes: image } } }, { text: "what is this?" }] }] },
};

describe("inline images", () => {
  it("finds the picture in every family's body and charges it what a provider counts for one, not its bytes / 4", () => {
    for (const [family, body] of Object.entries(BODIES)) {
      const { bytes } = sized(body);
      expect(inlineMedia(body, bytes), family).toEqual({ unsure: false, chars: image.length + (family.startsWith("openai") ? "data:image/png;base64,".length + (family === "openai responses" ? 1 : 0) : 0), tokens: IMAGE_TOKENS });
      // Before: about 100,000 tokens for a 300 KB picture. Now the rest of the body and the picture's allowance.
      const cost = estimateTokens({ ...(body as object), max_tokens: 0 }, bytes);
      expect(cost, family).toBeGreaterThan(IMAGE_TOKENS);
      expect(cost, family).toBeLessThan(IMAGE_TOKENS + 100);
    }
  });

  it("counts each picture, and a small one at its bytes / 4", () => {
    const small = b64(2_000);
    const body = { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${image}` } }, { type: "image_url", image_url: { url: `data:image/png;base64,${image}` } }, { type: "image_url", image_url: { url: `data:image/png;base64,${small}` } }] }] };
    const { bytes } = sized(body);
    expect(inlineMedia(body, bytes).tokens).toBe(2 * IMAGE_TOKENS + Math.ceil((small.length + 22) / 4));
  });

  it("marks the estimate unsure where other media ride inline (a document, audio, video), priced by their bytes", () => {
    const others = [
      // platform.openai.com/docs/guides/pdf-files: a `file` part's file_data; /docs/guides/audio: input_audio's data.
      { messages: [{ role: "user", content: [{ type: "file", file: { filename: "a.pdf", file_data: `data:application/pdf;base64,${image}` } }] }] },
      { messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: image, format: "wav" } }] }] },
      // Anthropic's document block, Gemini's inline PDF, Bedrock Converse's document and video.
      { messages: [{ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: image } }] }] },
      { contents: [{ parts: [{ inline_data: { mime_type: "audio/mp3", data: image } }] }] },
      { messages: [{ role: "user", content: [{ document: { format: "pdf", name: "a", source: { bytes: image } } }] }] },
      { messages: [{ role: "user", content: [{ video: { format: "mp4", source: { bytes: image } } }] }] },
    ];
    for (const body of others) {
      const { bytes } = sized(body);
      expect(inlineMedia(body, bytes), JSON.stringify(body).slice(0, 80)).toEqual({ chars: 0, tokens: 0, unsure: true });
      expect(estimate({ ...body, max_tokens: 0 }, bytes)).toEqual({ cost: Math.ceil(bytes / 4), out: 0, unsure: true });
    }
    // A picture beside a document: the picture priced as one, the estimate still unsure.
    const both = { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${image}` } }, { type: "file", file: { file_data: `data:application/pdf;base64,${image}` } }] }] };
    expect(inlineMedia(both, sized(both).bytes)).toMatchObject({ tokens: IMAGE_TOKENS, unsure: true });
    expect(estimate(BODIES.anthropic, sized(BODIES.anthropic).bytes).unsure).toBeUndefined();
  });

  it("leaves alone what is not media: long text, a URL, and any body under the scan's size", () => {
    const text = "word ".repeat(40_000);
    const notImages = [
      { messages: [{ role: "user", content: text }] },
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `https://example.com/${"a".repeat(2_000)}.png` } }] }] },
      // `bytes` outside a source, and `data` of no type.
      { bytes: image, data: image, source: { data: image } },
    ];
    for (const body of notImages) {
      const { bytes } = sized(body);
      expect(inlineMedia(body, bytes)).toEqual({ chars: 0, tokens: 0, unsure: false });
      expect(estimate({ ...body, max_tokens: 0 }, bytes)).toEqual({ cost: Math.ceil(bytes / 4), out: 0 });
    }
    const tiny = { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${b64(2_000)}` } }] }] };
    expect(sized(tiny).bytes).toBeLessThan(MEDIA_SCAN_BYTES);
    expect(inlineMedia(tiny, sized(tiny).bytes)).toEqual({ chars: 0, tokens: 0, unsure: false });
  });

  it("looks through a deep or wide body without recursion, and gives up (bytes / 4) past its bound", () => {
    let deep: unknown = { inline_data: { mime_type: "image/png", data: image } };
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(inlineMedia(deep, 1_000_000).tokens).toBe(IMAGE_TOKENS);
    const wide = { messages: Array.from({ length: 120_000 }, () => ({ role: "user" })), image: { source: { bytes: image } } };
    expect(inlineMedia(wide, 10_000_000)).toEqual({ chars: 0, tokens: 0, unsure: false });
  });
});
