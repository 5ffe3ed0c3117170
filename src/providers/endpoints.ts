// Which endpoints of a provider a request reaches, by the family of APIs it speaks: the inference
// endpoints every virtual key may call, and the groups a key must be granted by name (its scopes).
// Data, like the provider table: a new endpoint is a row. Paths are `rest`, the path after
// `/<provider>` as sent (still percent-encoded), without the query.
import type { FlavourName } from "./table";

/** Endpoint groups. `inference` is every virtual key's; `all` is any method on any path. */
export const SCOPES = ["inference", "models", "moderations", "audio", "images", "files", "batches", "fine_tuning", "stored", "all"] as const;
export type Scope = (typeof SCOPES)[number];

/** What a virtual key may call when its scopes are not named: generation, embeddings and token counts, and the models list. */
export const DEFAULT_SCOPES: readonly Scope[] = ["inference", "models"];

type Rule = readonly [methods: string, path: RegExp];

/** OpenAI-style providers: OpenAI's paths start `/v1`; some base URLs already hold it (Groq's `/openai`), DeepSeek's work without it. */
const V1 = String.raw`(?:/v1)?`;
/** Gemini: `/v1beta/...`, `/v1/...`, `/v1alpha/...`. */
const GV = String.raw`/v1(?:beta|alpha)?`;
/** A Bedrock route's path starts with its region (`/bedrock/<region>/model/...`). */
const REGION = String.raw`/[a-z]{2}(?:-[a-z]+)+-\d{1,2}`;
/** Vertex: `/v1/projects/<p>/locations/<l>/publishers/<pub>` (v1beta1 too), or express mode's `/v1/publishers/<pub>`. */
const VX = String.raw`/v1(?:beta1)?(?:/projects/[^/]+/locations/[^/]+)?/publishers/[a-z]+`;
/** An Azure route's path starts with its resource (`/azure/<resource>/openai/...`); a pooled one may not. */
const AZ = String.raw`(?:/[^/]+)?/openai`;
const ID = String.raw`[^/]+`;

const re = (s: string) => new RegExp(`^${s}$`);

const TABLE: Record<FlavourName, Partial<Record<Exclude<Scope, "all">, readonly Rule[]>>> = {
  openai: {
    inference: [["POST", re(`${V1}/(?:chat/completions|completions|embeddings|responses|responses/input_tokens)`)]],
    models: [["GET", re(`${V1}/models(?:/.+)?`)]],
    moderations: [["POST", re(`${V1}/moderations`)]],
    audio: [["POST", re(`${V1}/audio/(?:speech|transcriptions|translations)`)]],
    images: [["POST", re(`${V1}/images/(?:generations|edits|variations)`)]],
    files: [["GET POST DELETE", re(`${V1}/(?:files|uploads)(?:/.*)?`)]],
    batches: [["GET POST", re(`${V1}/batches(?:/.*)?`)]],
    fine_tuning: [["GET POST DELETE", re(`${V1}/fine_tuning/.+`)]],
    // What the account stored: responses and chat completions by id, listed, read or deleted.
    stored: [
      ["GET POST DELETE", re(`${V1}/responses/${ID}(?:/.*)?`)],
      ["GET POST DELETE", re(`${V1}/chat/completions(?:/.*)?`)],
    ],
  },
  azure: {
    inference: [
      ["POST", re(`${AZ}/deployments/${ID}/(?:chat/completions|completions|embeddings)`)],
      ["POST", re(`${AZ}/v1/(?:chat/completions|completions|embeddings|responses)`)],
    ],
    models: [["GET", re(`${AZ}(?:/v1)?/models(?:/.+)?`)]],
    audio: [["POST", re(`${AZ}/deployments/${ID}/audio/(?:speech|transcriptions|translations)`)]],
    images: [["POST", re(`${AZ}/deployments/${ID}/images/(?:generations|edits)`)]],
    files: [["GET POST DELETE", re(`${AZ}(?:/v1)?/files(?:/.*)?`)]],
    batches: [["GET POST", re(`${AZ}(?:/v1)?/batches(?:/.*)?`)]],
    fine_tuning: [["GET POST DELETE", re(`${AZ}(?:/v1)?/fine_tuning/.+`)]],
    stored: [["GET POST DELETE", re(`${AZ}(?:/v1)?/(?:responses/${ID}|chat/completions)(?:/.*)?`)]],
  },
  anthropic: {
    inference: [["POST", re(`/v1/(?:messages|messages/count_tokens|complete)`)]],
    models: [["GET", re(`/v1/models(?:/${ID})?`)]],
    files: [["GET POST DELETE", re(`/v1/files(?:/.*)?`)]],
    batches: [["GET POST DELETE", re(`/v1/messages/batches(?:/.*)?`)]],
  },
  gemini: {
    inference: [
      ["POST", re(`${GV}/models/${ID}:(?:generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)`)],
      // The OpenAI-compatible route (ai.google.dev/gemini-api/docs/openai): the model is in the body.
      ["POST", re(`${GV}/openai/(?:chat/completions|embeddings)`)],
    ],
    models: [["GET", re(`${GV}(?:/openai)?/models(?:/${ID})?`)]],
    files: [["GET POST DELETE", re(`(?:/upload)?${GV}/files(?:/.*)?`)]],
    batches: [
      ["POST", re(`${GV}/models/${ID}:batchGenerateContent`)],
      ["GET POST DELETE", re(`${GV}/batches(?:/.*)?`)],
    ],
  },
  bedrock: {
    inference: [
      ["POST", re(`${REGION}/model/${ID}/(?:invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)`)],
      ["POST", re(`${REGION}/openai/v1/chat/completions`)],
    ],
  },
  vertex: {
    inference: [["POST", re(`${VX}/models/[^/:]+:(?:rawPredict|streamRawPredict|generateContent|streamGenerateContent|countTokens)`)]],
  },
};

/** The scope a request falls in for `flavour`, or null when it falls in none but `all`. */
export function scopeOf(flavour: FlavourName, method: string, rest: string): Exclude<Scope, "all"> | null {
  const m = method.toUpperCase();
  for (const [scope, rules] of Object.entries(TABLE[flavour]) as [Exclude<Scope, "all">, readonly Rule[]][])
    if (rules.some(([methods, path]) => methods.split(" ").includes(m) && path.test(rest))) return scope;
  return null;
}

/** Whether a key with `scopes` may send this request. */
export function allowed(scopes: readonly Scope[], flavour: FlavourName, method: string, rest: string): boolean {
  if (scopes.includes("all")) return true;
  const scope = scopeOf(flavour, method, rest);
  return scope !== null && scopes.includes(scope);
}

/** A generation, embedding or token count: the requests whose answers the response cache may keep. */
export const isInference = (flavour: FlavourName, method: string, rest: string) => scopeOf(flavour, method, rest) === "inference";
