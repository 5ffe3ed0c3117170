// What the stand-in reads from a request body: model, stream flags, the rough token cost.

export interface ParsedRequest {
  body: Record<string, unknown>;
  model: string;
  stream: boolean;
  /** OpenAI chat: stream_options.include_usage. */
  includeUsage: boolean;
  /** Rough prompt size, ceil(chars / 4), the way OpenAI estimates it against TPM. */
  promptTokens: number;
  /** max_tokens / max_completion_tokens / max_output_tokens, or null when absent. */
  maxTokens: number | null;
  /** Text of the last user turn (for echo replies). */
  lastUserText: string;
  /** The tier asked for (`service_tier`: Groq's and OpenAI's "flex"), or null. */
  serviceTier: string | null;
  /** How many answers it asks for: OpenAI's `n` (platform.openai.com/docs/api-reference/chat/create), else 1. */
  choices: number;
}

/** Keys whose string values (at any depth below them) are prompt text. */
const TEXT_KEYS = new Set(["content", "text", "input", "system", "instructions", "prompt", "messages", "contents", "systemInstruction"]);

/**
 * Tokens an inline image counts, whatever its size: 765, a 1024 x 1024 picture at high detail by
 * OpenAI's formula (85 + 170 a 512 px tile; platform.openai.com/docs/guides/images-vision). A
 * provider counts an image by its pixels, never its base64 text (a third party measured OpenAI's
 * TPM drawn by about 800 an image whatever its size: community.openai.com/t/1076053). A dialect
 * that counts otherwise says so (its `imageTokens`: Anthropic's).
 */
export const IMAGE_TOKENS = 765;
/**
 * Tokens other inline media count (a PDF, audio): what they hold, which the stand-in does not read.
 * It counts each as one page of a PDF would (OpenAI extracts a page's text and an image of it:
 * platform.openai.com/docs/guides/pdf-files): about 500 of text and 765 of picture.
 */
export const MEDIA_TOKENS = 1_265;

/** What `o[k]`, a string, is: an inline image (a data URL, an image-typed `data`, Bedrock's image `bytes`), other inline media, or text. */
function mediaKind(v: string, k: string, o: Record<string, unknown>, under: string | undefined): "image" | "media" | null {
  if (v.length < 1024) return null;
  if (v.startsWith("data:")) return v.startsWith("data:image/") ? "image" : "media";
  const type = o.media_type ?? o.mime_type ?? o.mimeType;
  if (k === "data" && typeof type === "string") return type.startsWith("image/") ? "image" : "media";
  if (k === "data" && under === "input_audio") return "media";
  return k === "bytes" && under === "source" ? "image" : null;
}

/**
 * Whether `o`, found under `under`, names an image the provider fetches or holds (a URL, a stored
 * file): OpenAI chat's `image_url.url` and the Responses API's `input_image`
 * (platform.openai.com/docs/guides/images-vision), Anthropic's image `source` of type `url` or
 * `file` (docs.anthropic.com/en/docs/build-with-claude/vision), Gemini's `file_data` typed
 * `image/...` (ai.google.dev/gemini-api/docs/image-understanding). The provider counts it by its
 * pixels as it would inline; the stand-in fetches nothing and takes every one for 1024 x 1024.
 */
function imageByReference(o: Record<string, unknown>, under: string | undefined): boolean {
  const notData = (v: unknown) => typeof v === "string" && !v.startsWith("data:");
  if (under === "image_url") return notData(o.url);
  if (o.type === "input_image") return notData(o.image_url) || typeof o.file_id === "string";
  const source = o.source as { type?: unknown } | undefined;
  if (o.type === "image" && source) return source.type === "url" || source.type === "file";
  const type = o.mime_type ?? o.mimeType;
  return (under === "file_data" || under === "fileData") && typeof type === "string" && type.startsWith("image/");
}

/** What `collect` adds up: text characters, tokens counted otherwise, and what its provider counts an image. */
type Tally = { chars: number; numbers: number; image: number };

function collect(value: unknown, inText: boolean, out: Tally, under?: string): void {
  if (typeof value === "string") {
    if (inText) out.chars += value.length;
  } else if (typeof value === "number") {
    if (inText) out.numbers += 1; // embeddings input given as token ids
  } else if (Array.isArray(value)) {
    for (const v of value) collect(v, inText, out, under);
  } else if (value && typeof value === "object") {
    const o = value as Record<string, unknown>;
    if (imageByReference(o, under)) out.numbers += out.image;
    for (const [k, v] of Object.entries(o)) {
      if (k === "role" || k === "type" || k === "id") continue;
      const kind = typeof v === "string" ? mediaKind(v, k, o, under) : null;
      if (kind) out.numbers += kind === "image" ? out.image : MEDIA_TOKENS;
      else collect(v, inText || TEXT_KEYS.has(k), out, k);
    }
  }
}

/** The prompt tokens of `value` as `estimatePromptTokens` counts a body's: every string in it is prompt text. */
export function textTokens(value: unknown): number {
  const out = { chars: 0, numbers: 0, image: IMAGE_TOKENS };
  collect(value, true, out);
  return Math.ceil(out.chars / 4) + out.numbers;
}

export function estimatePromptTokens(body: Record<string, unknown>, image = IMAGE_TOKENS): number {
  const out = { chars: 0, numbers: 0, image };
  for (const key of TEXT_KEYS) if (key in body) collect(body[key], true, out);
  return Math.ceil(out.chars / 4) + out.numbers;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p) => (typeof p === "string" ? p : typeof p?.text === "string" ? p.text : ""))
    .join("");
}

function lastUserText(body: Record<string, unknown>): string {
  if (typeof body.input === "string") return body.input;
  // OpenAI's messages or input, Anthropic's messages, Gemini's contents (each turn's `parts`).
  const turns = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : Array.isArray(body.contents) ? body.contents : [];
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i] as { role?: unknown; content?: unknown; parts?: unknown } | null;
    // A Gemini turn without a role is the user's.
    const user = turn?.role === "user" || (turns === body.contents && turn?.role === undefined);
    if (turn && user) return textOf(turn.content ?? turn.parts);
  }
  return "";
}

function positiveInt(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : null;
}

/** Parses a JSON body (`image`: what its provider counts a picture); returns an error message instead when it is not a JSON object. */
export function parseRequest(raw: string, image = IMAGE_TOKENS): ParsedRequest | string {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return "We could not parse the JSON body of your request.";
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) return "The request body must be a JSON object.";
  const b = body as Record<string, unknown>;
  const opts = b.stream_options as { include_usage?: unknown } | undefined;
  const generation = b.generationConfig as { maxOutputTokens?: unknown } | undefined;
  return {
    body: b,
    model: typeof b.model === "string" ? b.model : "",
    stream: b.stream === true,
    includeUsage: opts?.include_usage === true,
    promptTokens: estimatePromptTokens(b, image),
    maxTokens: positiveInt(b.max_tokens) ?? positiveInt(b.max_completion_tokens) ?? positiveInt(b.max_output_tokens) ?? positiveInt(generation?.maxOutputTokens),
    lastUserText: lastUserText(b),
    serviceTier: typeof b.service_tier === "string" ? b.service_tier : null,
    choices: Math.max(1, positiveInt(b.n) ?? 1),
  };
}
