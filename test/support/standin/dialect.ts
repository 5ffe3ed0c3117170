// What differs between providers, behind one interface; the pipeline in handle.ts is shared.
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

export interface Dialect {
  name: "openai" | "anthropic" | "azure";
  /** Path suffix (after any prefix such as /v1) to endpoint. */
  endpoints: Record<string, Endpoint>;
  credential(h: IncomingHttpHeaders): string | undefined;
  /** Request checks the real API makes before anything else (required fields, headers, query). */
  check(h: IncomingHttpHeaders, req: ParsedRequest, endpoint: string, query?: URLSearchParams): ErrorReply | null;
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
  quotaExhausted(): ErrorReply;
  /** A model the account does not have (options.models): the real APIs' 404, naming the model as sent. */
  unknownModel(model: string): ErrorReply;
  /** Headers naming the account on every answer (OpenAI's organization and project, Anthropic's organization id). */
  identity(org: string): Record<string, string>;
  /** Provider-made faults (524 is Cloudflare's, see faults.ts). */
  fault(status: 500 | 503 | 529): ErrorReply;
}

export function encodeSse(e: SseEvent): string {
  const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data);
  return (e.event ? `event: ${e.event}\n` : "") + `data: ${data}\n\n`;
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
