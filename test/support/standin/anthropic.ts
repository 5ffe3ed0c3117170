// Anthropic: POST /v1/messages (plain and streamed), errors and headers.
import type { Dialect, EndpointResult, ErrorReply, Refusal, SseEvent } from "./dialect.ts";
import { rfc3339In } from "./dialect.ts";
import type { LimitState } from "./limits.ts";
import { base62 } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { ParsedRequest } from "./request.ts";

const SALES = "contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.";

function error(status: number, type: string, message: string): ErrorReply {
  return { status, body: { type: "error", error: { type, message } } };
}

function messages(req: ParsedRequest, r: Reply): EndpointResult {
  const stopReason = r.truncated ? "max_tokens" : "end_turn";
  const usage = (output: number) => ({
    input_tokens: r.inputTokens - r.cacheRead - r.cacheWrite,
    cache_creation_input_tokens: r.cacheWrite,
    cache_read_input_tokens: r.cacheRead,
    output_tokens: output,
    service_tier: "standard",
  });
  const message = (content: unknown[], stop: string | null, output: number) => ({
    id: `msg_01${base62(22)}`,
    type: "message",
    role: "assistant",
    model: r.model,
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: usage(output),
  });
  if (!req.stream) return { json: message([{ type: "text", text: r.text }], stopReason, r.outputTokens) };

  const ev = (type: string, fields: object = {}): SseEvent => ({ event: type, data: { type, ...fields } });
  return {
    stream: {
      head: [
        ev("message_start", { message: message([], null, 1) }),
        ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        ev("ping"),
      ],
      deltas: r.pieces.map((text) => ev("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
      tail: [
        ev("content_block_stop", { index: 0 }),
        ev("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: r.outputTokens } }),
        ev("message_stop"),
      ],
    },
  };
}

function headerSet(prefix: string, s: LimitState, now?: number): Record<string, string> {
  return {
    [`anthropic-ratelimit-${prefix}-limit`]: String(s.limit),
    [`anthropic-ratelimit-${prefix}-remaining`]: String(s.remaining),
    [`anthropic-ratelimit-${prefix}-reset`]: rfc3339In(s.resetMs, now),
  };
}

export const anthropic: Dialect = {
  name: "anthropic",
  host: "api.anthropic.com",
  scope: "credential",
  // ITPM and OTPM, no limit on both together (docs.anthropic.com/en/api/rate-limits).
  tokensApart: true,
  // Prompt caching, its reads left out of ITPM (prompt-cache.ts).
  promptCache: true,
  endpoints: { "/messages": messages, "/messages/count_tokens": (req) => ({ json: { input_tokens: req.promptTokens } }) },
  counts: { endpoint: "/messages/count_tokens", rpmTimes: 2 },
  // width x height / 750 (docs.anthropic.com/en/docs/build-with-claude/vision): 1,398 for 1024 x 1024.
  imageTokens: Math.round((1024 * 1024) / 750),
  reportsStreamUsage: () => true, // message_start and message_delta carry it


  credential(h) {
    if (typeof h["x-api-key"] === "string" && h["x-api-key"]) return h["x-api-key"];
    return /^Bearer\s+(.+)$/i.exec(h.authorization ?? "")?.[1]?.trim() || undefined;
  },

  check(h, req, endpoint) {
    if (!h["anthropic-version"]) return error(400, "invalid_request_error", "anthropic-version: header is required");
    // A token count takes no max_tokens (docs.anthropic.com/en/api/messages-count-tokens).
    for (const field of endpoint === "/messages/count_tokens" ? ["model", "messages"] : ["model", "messages", "max_tokens"]) {
      if (!(field in req.body)) return error(400, "invalid_request_error", `${field}: Field required`);
    }
    return null;
  },

  requestId: () => ({ "request-id": `req_011C${base62(20)}` }),

  stamp: (body, ids) => ({ ...(body as object), request_id: ids["request-id"] ?? null }),

  limitHeaders(states: LimitState[], now?: number) {
    let out: Record<string, string> = {};
    // tokens-* is input and output together: each of its figures their sum, its reset the later one
    // (an answer recorded from api.anthropic.com: input 80,000 + output 16,000 = tokens 96,000, in
    // tidyllm's test fixtures, third party; the same in test/policy/headers.test.ts's header set). A
    // bucket of both (a `tpm` given with `tokensApart` off) is told as itself.
    const both = states.find((s) => s.kind === "tokens");
    const apart = states.filter((s) => s.kind === "input" || s.kind === "output");
    const tokens = both ?? (apart.length === 0 ? null : apart.reduce((a, s) => ({ ...a, limit: a.limit + s.limit, remaining: a.remaining + s.remaining, resetMs: Math.max(a.resetMs, s.resetMs) })));
    if (tokens) out = { ...out, ...headerSet("tokens", tokens, now) };
    for (const s of states) {
      if (s.kind === "requests") out = { ...out, ...headerSet("requests", s, now) };
      if (s.kind === "input") out = { ...out, ...headerSet("input-tokens", s, now) };
      if (s.kind === "output") out = { ...out, ...headerSet("output-tokens", s, now) };
    }
    return out;
  },

  unauthorized: (credential) =>
    error(401, "authentication_error", credential === undefined ? "x-api-key header is required" : "invalid x-api-key"),

  invalid: (message) => error(400, "invalid_request_error", message),

  notFound: () => error(404, "not_found_error", "Not Found"),
  unknownModel: (model) => error(404, "not_found_error", `model: ${model}`),
  identity: (org) => ({ "anthropic-organization-id": `${org}-0000-4000-8000-000000000000` }),

  rateLimited(r: Refusal, _model, org) {
    const unit = { requests: "requests", tokens: "tokens", input: "input tokens", output: "output tokens", dayRequests: "requests", monthTokens: "tokens" }[r.kind];
    return error(429, "rate_limit_error", `This request would exceed the rate limit for your organization (${org}) of ${r.limit} ${unit} per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also ${SALES}`);
  },

  tooManyConcurrent: () =>
    error(429, "rate_limit_error", `Number of concurrent connections has exceeded your rate limit. Please try again later or ${SALES}`),

  quotaExhausted: () =>
    error(400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."),

  fault(status) {
    if (status === 529) return error(529, "overloaded_error", "Overloaded");
    return error(status, "api_error", status === 500 ? "Internal server error" : "Service Unavailable");
  },
};
