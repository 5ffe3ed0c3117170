// What differs between providers, behind one interface; the pipeline in handle.ts is shared. The
// OpenAI-style providers are rows over one implementation (openai-like.ts, providers.ts).
import type { IncomingHttpHeaders } from "node:http";
import type { Admission, LimitState } from "./limits.ts";
import type { Reply } from "./reply.ts";
import type { ParsedRequest } from "./request.ts";

export interface ErrorReply {
  status: number;
  body: unknown;
}

/** One server-sent event; a string `data` is written as is (OpenAI's `[DONE]`). */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** A stream: `head` goes out first, then each delta after its share of the latency, then `tail`. */
export interface StreamPlan {
  head: SseEvent[];
  deltas: SseEvent[];
  tail: SseEvent[];
}

export type EndpointResult = { json: unknown } | { stream: StreamPlan };
export type Endpoint = (req: ParsedRequest, reply: Reply) => EndpointResult;
export type Refusal = Exclude<Admission, { ok: true }>;

export type DialectName =
  | "openai" | "anthropic" | "azure" | "gemini" | "gemini-openai" | "groq" | "mistral"
  | "openrouter" | "deepseek" | "together" | "fireworks" | "xai" | "vertex-anthropic" | "vertex-gemini";

/** How a 429 says when to come back, beside its body: `retry-after` (seconds), that plus `retry-after-ms` (Azure), or nothing (Gemini). */
export type RetryHeaders = "seconds" | "seconds+ms" | "none";

export interface Dialect {
  name: DialectName;
  /** Path suffix (after any prefix such as /v1) to endpoint. */
  endpoints: Record<string, Endpoint>;
  /** The credential, from the headers or (Gemini's `?key=`) the query. */
  credential(h: IncomingHttpHeaders, query?: URLSearchParams): string | undefined;
  /** Whether a streamed answer of this endpoint reports its usage (when it is not asked for, some do not). */
  reportsStreamUsage(endpoint: string, req: ParsedRequest): boolean;
  /** Default "seconds". */
  retryHeaders?: RetryHeaders;
  /** Lines that hold a connection open before the answer starts (DeepSeek); none: the wait is silent. */
  keepAlive?: { plain: string; stream: string };
  /** The line ending of its server-sent events (Gemini's native stream: "\r\n"); default "\n". */
  sseEol?: string;
  /**
   * Its credential is an access token the stand-in's own Google token endpoint issued
   * (google-oauth.ts), checked for this resource and RPC method (Vertex's routes).
   */
  google?: { resource: string; method: string };
  /** Where its limits hold: per credential, or per credential and model (or deployment): limits.ts keeps an account per scope. */
  scope: "credential" | "model";
  /**
   * It limits input and output tokens apart and has no limit on both together (Anthropic's ITPM and
   * OTPM): a `tpm` given it is each of the two (limits.ts `countedApart`).
   */
  tokensApart?: true;
  /** It caches prompt prefixes marked `cache_control`, and its input window leaves the reads out (prompt-cache.ts). */
  promptCache?: true;
  /** What it counts a picture, where not IMAGE_TOKENS (request.ts): the stand-in takes every one for 1024 x 1024. */
  imageTokens?: number;
  /** Its TPM counts input tokens alone (Gemini's "Tokens per minute (input)", ai.google.dev/gemini-api/docs/rate-limits). */
  inputTpm?: true;
  /**
   * Its token-count endpoint, limited apart from generation: its own requests window, at `rpm` x
   * this, and no tokens (Anthropic's `/messages/count_tokens`: 100 RPM at tier 1 where messages get 50,
   * and twice at every tier; "separate and independent rate limits", build-with-claude/token-counting).
   */
  counts?: { endpoint: string; rpmTimes: number };
  /** The host its 524 page names. */
  host: string;
  /** Request checks the real API makes before anything else (required fields, headers, query). */
  check(h: IncomingHttpHeaders, req: ParsedRequest, endpoint: string, query?: URLSearchParams, path?: string): ErrorReply | null;
  /** The request-id header(s) of every answer. */
  requestId(): Record<string, string>;
  /** An error body as sent, given the request-id headers (Anthropic repeats the id in it). */
  stamp(body: unknown, ids: Record<string, string>): unknown;
  /** `now` (epoch ms) for the resets that are timestamps; the simulator runs on its own clock. */
  limitHeaders(states: LimitState[], now?: number): Record<string, string>;
  unauthorized(credential: string | undefined): ErrorReply;
  invalid(message: string): ErrorReply;
  notFound(method: string, path: string): ErrorReply;
  rateLimited(r: Refusal, model: string, org: string, endpoint?: string): ErrorReply;
  tooManyConcurrent(model: string, org: string): ErrorReply;
  /** Spent credits, no balance, a spending limit reached: the credential's billing refusal. */
  quotaExhausted(model: string): ErrorReply;
  /** A model the account does not have (options.models): the real APIs' 404, naming the model as sent. */
  unknownModel(model: string): ErrorReply;
  /** Headers naming the account on every answer (OpenAI's organization and project, Anthropic's organization id). */
  identity(org: string): Record<string, string>;
  /** Provider-made faults (524 is Cloudflare's, see faults.ts); 498 is Groq's flex tier at capacity. */
  fault(status: 498 | 500 | 503 | 529): ErrorReply;
}

export function encodeSse(e: SseEvent, eol = "\n"): string {
  const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data);
  return (e.event ? `event: ${e.event}${eol}` : "") + `data: ${data}${eol}${eol}`;
}

/** Go's time.Duration format as OpenAI sends it: "6m0s", "1.5s", "20ms", "0s". */
export function goDuration(ms: number): string {
  const total = Math.ceil(ms);
  if (total <= 0) return "0s";
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const s = (total % 60_000) / 1000;
  return (h ? `${h}h` : "") + (h || m ? `${m}m` : "") + `${s}s`;
}

/** RFC 3339 at second precision, rounded up, as Anthropic sends its resets. */
export function rfc3339In(ms: number, now = Date.now()): string {
  const at = Math.ceil((now + Math.max(0, ms)) / 1000) * 1000;
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");
}
