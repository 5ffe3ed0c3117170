// Media sent inline in a request body, as every family sends it: base64 text that a token per 4
// bytes would price at hundreds of thousands of tokens, where a provider counts an image as a few
// hundred to a couple of thousand. Other media (documents, audio, video) count by what they hold,
// which the bytes do not say: they keep their bytes / 4 and make the estimate unsure. Pure.

/**
 * What one inline image is charged, at most (a small one: its bytes / 4). Anthropic counts an image
 * as width x height / 750 tokens and scales larger ones down to about 1,600
 * (docs.anthropic.com/en/docs/build-with-claude/vision); OpenAI counts a high-detail image at most
 * 1,445 on gpt-4o (85 + 170 a 512 px tile; platform.openai.com/docs/guides/images-vision) and, in a
 * third party's measurement of `x-ratelimit-remaining-tokens`, about 800 against TPM whatever its
 * size (community.openai.com/t/1076053); Gemini 258 a 768 px tile (ai.google.dev/gemini-api/docs/tokens).
 * Above it: some models' larger tiles (gpt-4.1-nano, very large images on Gemini), found by 429s.
 */
export const IMAGE_TOKENS = 1_600;
/** Bodies smaller than this are priced by their bytes alone: an image in them is small. */
export const MEDIA_SCAN_BYTES = 16 * 1024;
/** A string shorter than this is never taken for an image (a URL, a name, a short text). */
const MIN_IMAGE_CHARS = 1024;
/** Nodes a scan visits at most: a body of more is priced by its bytes (an upper bound). */
const MAX_NODES = 100_000;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const imageType = (v: unknown) => typeof v === "string" && v.startsWith("image/");

/**
 * What `key`'s string value in `o` (found under `parent`, itself under `above`) is. An image: a
 * `data:image/` URL (OpenAI's `image_url`, the Responses API's `input_image`, and the OpenAI-style
 * providers'), the `data` of an
 * object typed `image/...` (Anthropic's base64 `source` with `media_type`, Gemini's
 * `inline_data`/`inlineData` with `mime_type`/`mimeType`), or the `bytes` of an image's `source`
 * (Bedrock Converse's `{image: {format, source: {bytes}}}`). Other media: another `data:` URL
 * (OpenAI's `file_data`), the `data` of an object typed otherwise (a PDF, audio) or of OpenAI's
 * `input_audio`, the `bytes` of a document's or video's `source`.
 */
function kindOf(s: string, key: string, o: Obj, parent: string | undefined, above: string | undefined): "image" | "media" | null {
  if (s.length < MIN_IMAGE_CHARS) return null;
  if (s.startsWith("data:")) return s.startsWith("data:image/") ? "image" : "media";
  if (key === "data") {
    const type = o.media_type ?? o.mime_type ?? o.mimeType;
    if (typeof type === "string") return imageType(type) ? "image" : "media";
    return parent === "input_audio" ? "media" : null;
  }
  // Bedrock Converse: `{image: {format, source: {bytes}}}`, `{document: ...}`, `{video: ...}`.
  if (key === "bytes" && parent === "source") return above === "image" ? "image" : "media";
  return null;
}

/**
 * The inline images in a parsed body: the characters of their text and the tokens they are charged
 * (each at most IMAGE_TOKENS); `unsure` when it holds other media too. Only a body of
 * MEDIA_SCAN_BYTES or more is looked through, once, without recursion (a caller's body may nest deep).
 */
export function inlineMedia(body: unknown, bytes: number): { chars: number; tokens: number; unsure: boolean } {
  const found = { chars: 0, tokens: 0, unsure: false };
  if (bytes < MEDIA_SCAN_BYTES || typeof body !== "object" || body === null) return found;
  const stack: [unknown, string | undefined, string | undefined][] = [[body, undefined, undefined]];
  // Each object with the key it came under (Bedrock's `source` under `image`, OpenAI's `input_audio`).
  for (let seen = 0; stack.length > 0; seen++) {
    if (seen > MAX_NODES) return { chars: 0, tokens: 0, unsure: found.unsure };
    const [node, under, above] = stack.pop()!;
    if (Array.isArray(node)) {
      for (const v of node) if (typeof v === "object" && v !== null) stack.push([v, under, above]);
      continue;
    }
    if (!isObj(node)) continue;
    for (const key in node) {
      const v = node[key];
      if (typeof v === "string") {
        const kind = kindOf(v, key, node, under, above);
        if (kind === "image") {
          found.chars += v.length;
          found.tokens += Math.min(Math.ceil(v.length / 4), IMAGE_TOKENS);
        } else if (kind === "media") found.unsure = true;
      } else if (typeof v === "object" && v !== null) stack.push([v, key, under]);
    }
  }
  return found;
}
