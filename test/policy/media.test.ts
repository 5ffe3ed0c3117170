// Media in a body, inline or by reference, as each family sends them (src/policy/media.ts).
import { describe, expect, it } from "vitest";
import { estimate, estimateTokens } from "../../src/policy/estimate";
import { IMAGE_TOKENS, mediaIn } from "../../src/policy/media";
import { DIALECTS } from "../../src/providers/dialects";

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
      expect(mediaIn(body), family).toEqual({ unsure: false, chars: image.length + (family.startsWith("openai") ? "data:image/png;base64,".length + (family === "openai responses" ? 1 : 0) : 0), tokens: IMAGE_TOKENS });
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
    expect(mediaIn(body).tokens).toBe(2 * IMAGE_TOKENS + Math.ceil((small.length + 22) / 4));
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
      expect(mediaIn(body), JSON.stringify(body).slice(0, 80)).toEqual({ chars: 0, tokens: 0, unsure: true });
      expect(estimate({ ...body, max_tokens: 0 }, bytes)).toEqual({ cost: Math.ceil(bytes / 4), out: 0, unsure: true });
    }
    // A picture beside a document: the picture priced as one, the estimate still unsure.
    const both = { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${image}` } }, { type: "file", file: { file_data: `data:application/pdf;base64,${image}` } }] }] };
    expect(mediaIn(both)).toMatchObject({ tokens: IMAGE_TOKENS, unsure: true });
    expect(estimate(BODIES.anthropic, sized(BODIES.anthropic).bytes).unsure).toBeUndefined();
  });

  it("leaves alone what is not media: long text, a URL that is no image's, `bytes` and `data` where no image is", () => {
    const text = "word ".repeat(40_000);
    const notImages = [
      { messages: [{ role: "user", content: text }] },
      { messages: [{ role: "user", content: [{ type: "text", text: `see https://example.com/${"a".repeat(2_000)}.png` }], metadata: { url: "https://example.com/a.png" } }] },
      // `bytes` outside a source, `data` of no type, a URL under a key no family names an image with.
      { bytes: image, data: image, source: { data: image }, link: { url: "https://example.com/a.png" } },
    ];
    for (const body of notImages) {
      const { bytes } = sized(body);
      expect(mediaIn(body)).toEqual({ chars: 0, tokens: 0, unsure: false });
      expect(estimate({ ...body, max_tokens: 0 }, bytes)).toEqual({ cost: Math.ceil(bytes / 4), out: 0 });
    }
    // A small picture inline is charged its bytes / 4 (to a token's rounding), as every small body was before it was looked through.
    const tiny = { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${b64(2_000)}` } }] }] };
    const { cost } = estimate({ ...tiny, max_tokens: 0 }, sized(tiny).bytes);
    expect(cost - Math.ceil(sized(tiny).bytes / 4)).toBeGreaterThanOrEqual(0);
    expect(cost - Math.ceil(sized(tiny).bytes / 4)).toBeLessThanOrEqual(1);
  });

});

describe("images by reference", () => {
  const url = "https://example.com/cat.png";
  /** A picture each family names by URL or a stored file, where the body carries a few dozen bytes of it. */
  const REFERENCED: Record<string, unknown> = {
    // platform.openai.com/docs/guides/images-vision: chat's image_url with a URL; the Responses API's input_image by URL or file id.
    "openai chat": { model: "gpt-4o", messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url, detail: "high" } }] }] },
    "openai responses url": { model: "gpt-4o", input: [{ role: "user", content: [{ type: "input_text", text: "what is this?" }, { type: "input_image", image_url: url }] }] },
    "openai responses file": { model: "gpt-4o", input: [{ role: "user", content: [{ type: "input_image", file_id: "file-abc123" }, { type: "input_text", text: "what is this?" }] }] },
    // docs.anthropic.com/en/docs/build-with-claude/vision and /files: a url source, a file source.
    "anthropic url": { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url } }, { type: "text", text: "what is this?" }] }] },
    "anthropic file": { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "file_011abc" } }, { type: "text", text: "what is this?" }] }] },
    // ai.google.dev/gemini-api/docs/image-understanding: file_data (REST) or fileData (SDKs) with an image's mime type.
    gemini: { contents: [{ parts: [{ file_data: { mime_type: "image/jpeg", file_uri: "https://generativelanguage.googleapis.com/v1beta/files/abc" } }, { text: "what is this?" }] }] },
    "gemini camel": { contents: [{ parts: [{ fileData: { mimeType: "image/png", fileUri: "gs://bucket/cat.png" } }, { text: "what is this?" }] }] },
    // docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ImageSource.html: an image's source in S3.
    "bedrock converse": { messages: [{ role: "user", content: [{ image: { format: "png", source: { s3Location: { uri: "s3://bucket/cat.png" } } } }, { text: "what is this?" }] }] },
  };

  it("charges a picture each family names by URL or file what a provider counts for one, where its bytes were a few dozen tokens", () => {
    for (const [family, body] of Object.entries(REFERENCED)) {
      const { bytes } = sized(body);
      expect(mediaIn(body), family).toEqual({ chars: 0, tokens: IMAGE_TOKENS, unsure: false });
      // Before: the body's bytes / 4 alone, under 100 tokens for what a provider counts as up to 1,600.
      expect(estimateTokens({ ...(body as object), max_tokens: 0 }, bytes), family).toBe(Math.ceil(bytes / 4) + IMAGE_TOKENS);
    }
  });

  it("charges each at what the key's provider row counts one where it says (OpenAI's TPM about 800), inline or by reference", () => {
    const perImage = DIALECTS.openai.limits.imageTokens!;
    expect(perImage).toBeLessThan(IMAGE_TOKENS);
    const chat = REFERENCED["openai chat"]!;
    expect(estimateTokens({ ...(chat as object), max_tokens: 0 }, sized(chat).bytes, perImage)).toBe(Math.ceil(sized(chat).bytes / 4) + perImage);
    expect(mediaIn(BODIES["openai chat"], perImage).tokens).toBe(perImage);
    // Every other row charges the most: none names a count of its own.
    for (const [name, row] of Object.entries(DIALECTS)) if (name !== "openai") expect(row.limits.imageTokens, name).toBeUndefined();
  });

  it("counts each picture once, beside those inline, and not a document, audio or video by reference", () => {
    const three = { messages: [{ role: "user", content: [
      { type: "image_url", image_url: { url } }, { type: "image_url", image_url: { url: `${url}?2` } },
      { type: "image_url", image_url: { url: `data:image/png;base64,${image}` } },
    ] }] };
    expect(mediaIn(three)).toMatchObject({ tokens: 3 * IMAGE_TOKENS });
    const others = [
      { messages: [{ role: "user", content: [{ type: "document", source: { type: "url", url: "https://example.com/a.pdf" } }] }] },
      { contents: [{ parts: [{ file_data: { mime_type: "video/mp4", file_uri: "https://www.youtube.com/watch?v=abc" } }] }] },
      { input: [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/a.pdf" }] }] },
      { messages: [{ role: "user", content: [{ video: { format: "mp4", source: { s3Location: { uri: "s3://b/v.mp4" } } } }] }] },
    ];
    for (const body of others) expect(mediaIn(body), JSON.stringify(body)).toEqual({ chars: 0, tokens: 0, unsure: false });
  });
});

describe("the walk", () => {
  it("looks through a deep or wide body without recursion, and gives up (bytes / 4) past its bound", () => {
    let deep: unknown = { inline_data: { mime_type: "image/png", data: image } };
    for (let i = 0; i < 50_000; i++) deep = [deep];
    expect(mediaIn(deep).tokens).toBe(IMAGE_TOKENS);
    const wide = { messages: Array.from({ length: 120_000 }, () => ({ role: "user" })), image: { source: { bytes: image } } };
    expect(mediaIn(wide)).toEqual({ chars: 0, tokens: 0, unsure: false });
  });
});
