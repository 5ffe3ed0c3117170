// Media in a request body, as every family sends it. Inline: base64 text that a token per 4 bytes
// would price at hundreds of thousands of tokens, where a provider counts an image as a few hundred
// to a couple of thousand. By reference (a URL, a stored file): a few dozen bytes for the same
// image. Other inline media (documents, audio, video) count by what they hold, which the bytes do
// not say: they keep their bytes / 4 and make the estimate unsure. Pure.

/**
 * What one image is charged, at most (a small one inline: its bytes / 4), where the key's provider
 * row counts none of its own (`limits.imageTokens`: OpenAI's TPM about 800). Anthropic counts an image
 * as width x height / 750 tokens and scales larger ones down to about 1,600
 * (docs.anthropic.com/en/docs/build-with-claude/vision); OpenAI counts a high-detail image at most
 * 1,445 on gpt-4o (85 + 170 a 512 px tile; platform.openai.com/docs/guides/images-vision) and, in a
 * third party's measurement of `x-ratelimit-remaining-tokens`, about 800 against TPM whatever its
 * size (community.openai.com/t/1076053); Gemini 258 a 768 px tile (ai.google.dev/gemini-api/docs/tokens).
 * Above it: some models' larger tiles (gpt-4.1-nano, very large images on Gemini), found by 429s.
 */
export const IMAGE_TOKENS = 1_600;
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
 * Whether `o` (found under `under`, itself under `above`) names an image the provider fetches or
 * holds, whose size the body does not carry: OpenAI chat's `image_url` with an https URL
 * (platform.openai.com/docs/guides/images-vision), the Responses API's `input_image` by URL or
 * `file_id`, Anthropic's image block with a `url` or `file` source
 * (docs.anthropic.com/en/docs/build-with-claude/vision), Gemini's `file_data`/`fileData` typed
 * `image/...` (ai.google.dev/gemini-api/docs/image-understanding), Bedrock Converse's image
 * `source` in S3 (API_runtime_ImageSource). A provider counts it as it would the picture inline.
 */
function imageByReference(o: Obj, under: string | undefined, above: string | undefined): boolean {
  if (under === "image_url") return typeof o.url === "string" && !o.url.startsWith("data:");
  if (o.type === "input_image") return (typeof o.image_url === "string" && !o.image_url.startsWith("data:")) || typeof o.file_id === "string";
  if (o.type === "image" && isObj(o.source)) return o.source.type === "url" || o.source.type === "file";
  if (under === "file_data" || under === "fileData") return imageType(o.mime_type ?? o.mimeType);
  return under === "source" && above === "image" && isObj(o.s3Location);
}

/**
 * The images in a parsed body: the characters of those inline and the tokens all are charged (an
 * inline one at most `perImage`, its row's count, one by reference `perImage`); `unsure` when it holds other
 * inline media too. Looked through once, without recursion (a caller's body may nest deep): a
 * walk of the tree `JSON.parse` already built, a few microseconds for a chat's body (BENCHMARKS.md).
 */
export function mediaIn(body: unknown, perImage = IMAGE_TOKENS): { chars: number; tokens: number; unsure: boolean } {
  const found = { chars: 0, tokens: 0, unsure: false };
  if (typeof body !== "object" || body === null) return found;
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
    if (imageByReference(node, under, above)) found.tokens += perImage;
    for (const key in node) {
      const v = node[key];
      if (typeof v === "string") {
        const kind = kindOf(v, key, node, under, above);
        if (kind === "image") {
          found.chars += v.length;
          found.tokens += Math.min(Math.ceil(v.length / 4), perImage);
        } else if (kind === "media") found.unsure = true;
      } else if (typeof v === "object" && v !== null) stack.push([v, key, under]);
    }
  }
  return found;
}
