// Images sent inline in a request body, as every family sends them: base64 text that a token per
// 4 bytes would price at hundreds of thousands of tokens, where a provider counts an image as a few
// hundred to a couple of thousand. Pure.

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
 * Whether `key`'s string value in `o` (found under `parent`) is an inline image: a `data:image/`
 * URL (OpenAI's `image_url`, the Responses API's `input_image`, and the OpenAI-style providers'), the
 * `data` of an object typed `image/...` (Anthropic's base64 `source` with `media_type`, Gemini's
 * `inline_data`/`inlineData` with `mime_type`/`mimeType`), or the `bytes` of an image's `source`
 * (Bedrock Converse's `{image: {format, source: {bytes}}}`).
 */
function isImage(s: string, key: string, o: Obj, parent: string | undefined): boolean {
  if (s.length < MIN_IMAGE_CHARS) return false;
  if (s.startsWith("data:image/")) return true;
  if (key === "data") return imageType(o.media_type) || imageType(o.mime_type) || imageType(o.mimeType);
  return key === "bytes" && parent === "source";
}

/**
 * The inline images in a parsed body: the characters of their text and the tokens they are charged
 * (each at most IMAGE_TOKENS). Only a body of MEDIA_SCAN_BYTES or more is looked through, once,
 * without recursion (a caller's body may nest deep).
 */
export function inlineImages(body: unknown, bytes: number): { chars: number; tokens: number } {
  const found = { chars: 0, tokens: 0 };
  if (bytes < MEDIA_SCAN_BYTES || typeof body !== "object" || body === null) return found;
  const stack: [unknown, string | undefined][] = [[body, undefined]];
  // Bedrock's `source` sits under `image`; what matters is the key the object holding `bytes` came under.
  for (let seen = 0; stack.length > 0; seen++) {
    if (seen > MAX_NODES) return { chars: 0, tokens: 0 };
    const [node, under] = stack.pop()!;
    if (Array.isArray(node)) {
      for (const v of node) if (typeof v === "object" && v !== null) stack.push([v, under]);
      continue;
    }
    if (!isObj(node)) continue;
    for (const key in node) {
      const v = node[key];
      if (typeof v === "string") {
        if (isImage(v, key, node, under)) {
          found.chars += v.length;
          found.tokens += Math.min(Math.ceil(v.length / 4), IMAGE_TOKENS);
        }
      } else if (typeof v === "object" && v !== null) stack.push([v, key]);
    }
  }
  return found;
}
