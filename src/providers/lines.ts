/**
 * @module What the batch command (src/cli/) knows per provider, as rows: the URLs a line may
 * name, and the providers' batch APIs a job's lines may go to (`--mode provider|auto`). Base URLs,
 * credentials and tiers come from the gateway's own rows (table.ts, dialects.ts), so the two never
 * disagree.
 */
import type { BatchRoutes } from "./flavour";

/** The provider a line names when it names none (`--provider`'s default); its batch lines are the input's and output's format. */
export const DEFAULT_LINE_PROVIDER = "openai";

/** The providers as the help names them. */
export const TITLES: Readonly<Record<string, string>> = {
  openai: "OpenAI", anthropic: "Anthropic", gemini: "Gemini", groq: "Groq", mistral: "Mistral", openrouter: "OpenRouter",
  deepseek: "DeepSeek", together: "Together AI", fireworks: "Fireworks AI", xai: "xAI", azure: "Azure OpenAI",
};

/**
 * What flex buys at each provider whose tiers row sells it, as the help says it: OpenAI's flex is
 * priced as its Batch API (half), Gemini's at half, Groq's at on-demand's price with ten times its
 * limits (providers/tiers.ts).
 */
export const FLEX_SAYS: Readonly<Record<string, string>> = { openai: "half price", gemini: "half", groq: "higher limits" };

/**
 * Routes on which a provider speaks another's wire, credential and all: Gemini's OpenAI-compatible
 * routes take OpenAI's bearer (ai.google.dev/gemini-api/docs/openai), as the OpenAI SDK sends it.
 */
export const SPEAKS: Readonly<Record<string, { routes: RegExp; as: string }>> = { gemini: { routes: /^\/v1(?:beta|alpha)?\/openai\//, as: "openai" } };

/** A URL a line may name: a path, or a pattern (a path that carries the model) with the form the help shows. */
export type LineUrl = string | { pattern: RegExp; shown: string };

/** What a provider without a list of its own takes: the OpenAI-compatible routes. */
const COMPATIBLE_URLS: readonly LineUrl[] = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"];

/** Exact paths per provider; Gemini's native paths carry the model, so they are matched by pattern. */
const LINE_URLS: Readonly<Record<string, readonly LineUrl[]>> = {
  openai: ["/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"],
  anthropic: ["/v1/messages"],
  gemini: [
    "/v1beta/openai/chat/completions",
    "/v1beta/openai/embeddings",
    { pattern: /^\/v1beta\/models\/[A-Za-z0-9._-]+:(generateContent|embedContent|countTokens)$/, shown: "/v1beta/models/<model>:generateContent" },
  ],
};

/** The URLs a line to `provider` may name. */
export const lineUrlsOf = (provider: string): readonly LineUrl[] => (Object.hasOwn(LINE_URLS, provider) ? LINE_URLS[provider]! : COMPATIBLE_URLS);

/** One provider's batch API as a job uses it. */
export interface BatchApiRow {
  /** The line URLs it batches, in the order the help and errors list them. */
  urls: readonly string[];
  /** Per batch: the most requests and bytes of input (the input file, or the create's body). */
  limits: { lines: number; bytes: number };
  /**
   * How a batch's requests travel (flavour.ts `BatchRoutes.input`): `file`, one JSONL line each
   * with its method and url, one endpoint and one model a batch, and the batch carries metadata
   * (a job's batch is found again by it); `inline`, any of its urls and models in one batch,
   * found again by its time and size.
   */
  input: BatchRoutes["input"];
  /** The custom_id pattern it takes, where it restricts one: a chunk with any other id sends line indexes. */
  ids?: RegExp;
}

/**
 * The batch APIs, by the provider whose lines they take. OpenAI: 50,000 requests and 200 MB a
 * batch (platform.openai.com/docs/guides/batch); Anthropic: 100,000 requests and 256 MB, custom_ids
 * of 1-64 letters, digits, `_` and `-` (docs.anthropic.com/en/docs/build-with-claude/batch-processing).
 */
export const BATCH_APIS = {
  openai: { urls: ["/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/responses"], limits: { lines: 50_000, bytes: 200 * 1024 * 1024 }, input: "file" },
  anthropic: { urls: ["/v1/messages"], limits: { lines: 100_000, bytes: 256 * 1024 * 1024 }, input: "inline", ids: /^[a-zA-Z0-9_-]{1,64}$/ },
} as const satisfies Record<string, BatchApiRow>;

/** A batch API by its provider's name (what a job's state file records). */
export type Api = keyof typeof BATCH_APIS;

/** The rows, each read as a BatchApiRow. */
export const BATCH_API_ROWS: Readonly<Record<Api, BatchApiRow>> = BATCH_APIS;

/** The batch API a line to `provider` at `url` can go to, or null: its provider has none here, or its endpoint cannot be batched. */
export function batchApiOf(provider: string, url: string): Api | null {
  return Object.hasOwn(BATCH_APIS, provider) && BATCH_API_ROWS[provider as Api].urls.includes(url) ? (provider as Api) : null;
}
