// One implementation of an OpenAI-style provider, configured by a row (providers.ts): its error
// envelope, its limit headers (names, windows, units, reset formats), its refusals, where its
// usage is, its keep-alive. The shape of vercel/ai's openai-compatible package: a provider's
// differences as a small declaration beside shared code.
import { chatCompletions, chatStreamReportsUsage } from "./chat.ts";
import type { ChatStyle } from "./chat.ts";
import type { Dialect, DialectName, ErrorReply, Refusal, RetryHeaders } from "./dialect.ts";
import { goDuration } from "./dialect.ts";
import type { LimitKind, LimitState } from "./limits.ts";
import { embeddings, openai } from "./openai.ts";
import { hex } from "./reply.ts";

/** What an error says, whatever envelope carries it. */
export interface ErrorFields {
  message: string;
  type?: string | null;
  code?: string | number | null;
  /** OpenRouter's `error.metadata` (a 429's limit headers, the upstream provider). */
  metadata?: object;
}

/** One limit header: which window it reports, which figure, in what unit and format. */
export interface HeaderField {
  name: string;
  window: LimitKind;
  field: "limit" | "remaining" | "reset" | "over";
  /** "second": a per-minute window reported per second (its figure over 60: Together's, Fireworks'). */
  per?: "second";
  /** A reset as a Go duration ("7.66s": Groq) or whole seconds until the window is full (Mistral, Together). */
  format?: "go" | "seconds";
}

export interface OpenAiLikeRow {
  name: DialectName;
  host: string;
  scope: "credential" | "model";
  chat: ChatStyle;
  embeddings: boolean;
  headers: readonly HeaderField[];
  retryHeaders?: RetryHeaders;
  keepAlive?: Dialect["keepAlive"];
  /** The provider's error envelope around the fields. */
  envelope(status: number, e: ErrorFields): unknown;
  unauthorized: ErrorFields & { status: number };
  /** A refusal from one of its limits: its body (and status, when it is not 429). */
  rateLimited(r: Refusal, model: string, org: string): ErrorFields & { status?: number };
  /** Spent credits, no balance, a spending or monthly limit. */
  billing(model: string): ErrorFields & { status: number };
  /** Its faults' bodies where they differ from a plain server error. */
  faults?: Partial<Record<498 | 500 | 503 | 529, ErrorFields>>;
}

const FAULT: Record<498 | 500 | 503 | 529, ErrorFields> = {
  498: { message: "Capacity exceeded", type: "server_error" },
  500: { message: "Internal server error", type: "server_error" },
  503: { message: "Service unavailable", type: "server_error" },
  529: { message: "Overloaded", type: "server_error" },
};

/** A header's value for one window's state. */
function headerValue(f: HeaderField, s: LimitState): string {
  const scale = f.per === "second" ? s.windowMs / 1000 : 1;
  if (f.field === "limit") return String(Math.floor(s.limit / scale));
  // A per-second window's remaining is the bucket's level: a provider that counts per second has a bucket of a second's worth (burst 1 / 60).
  if (f.field === "remaining") return String(s.remaining);
  if (f.field === "over") return s.remaining <= 0 ? "yes" : "no";
  return f.format === "go" ? goDuration(s.resetMs) : String(Math.ceil(s.resetMs / 1000));
}

export function openaiLike(row: OpenAiLikeRow): Dialect {
  const reply = (status: number, e: ErrorFields): ErrorReply => ({ status, body: row.envelope(status, e) });
  const chat = chatCompletions(row.chat);
  return {
    name: row.name,
    host: row.host,
    scope: row.scope,
    retryHeaders: row.retryHeaders,
    keepAlive: row.keepAlive,
    endpoints: { "/chat/completions": chat, ...(row.embeddings ? { "/embeddings": embeddings } : {}) },
    reportsStreamUsage: (_endpoint, req) => chatStreamReportsUsage(row.chat, req),
    credential: (h) => /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() || undefined,
    check(h, req, endpoint) {
      const bad = openai.check(h, req, endpoint);
      return bad && reply(bad.status, (bad.body as { error: ErrorFields }).error);
    },
    requestId: () => ({ "x-request-id": `req_${hex(26)}` }),
    stamp: (body) => body,
    limitHeaders(states: LimitState[]) {
      const out: Record<string, string> = {};
      for (const f of row.headers) {
        const s = states.find((x) => x.kind === f.window);
        if (s) out[f.name] = headerValue(f, s);
      }
      return out;
    },
    unauthorized: () => reply(row.unauthorized.status, row.unauthorized),
    invalid: (message) => reply(400, { message, type: "invalid_request_error" }),
    notFound: (method, path) => reply(404, { message: `Invalid URL (${method} ${path})`, type: "invalid_request_error" }),
    unknownModel: (model) => reply(404, { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: "invalid_request_error", code: "model_not_found" }),
    identity: () => ({}),
    rateLimited(r, model, org) {
      const { status = 429, ...e } = row.rateLimited(r, model, org);
      return reply(status, e);
    },
    tooManyConcurrent: (model, org) => {
      const e = row.rateLimited({ ok: false, kind: "requests", limit: 0, used: 0, requested: 1, waitMs: 1000 }, model, org);
      return reply(429, e);
    },
    quotaExhausted(model) {
      const { status, ...e } = row.billing(model);
      return reply(status, e);
    },
    fault: (status) => reply(status, row.faults?.[status] ?? FAULT[status]),
  };
}

/** OpenAI's envelope: `{"error": {"message", "type", "param", "code"}}`. */
export const openaiEnvelope = (_status: number, e: ErrorFields) => ({ error: { message: e.message, type: e.type ?? null, param: null, code: e.code ?? null } });
