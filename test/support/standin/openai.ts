// OpenAI: chat completions, embeddings (responses.ts has the Responses API), errors and headers.
import { chatCompletions, chatStreamReportsUsage, OPENAI_STYLE } from "./chat.ts";
import type { Dialect, EndpointResult, ErrorReply, Refusal } from "./dialect.ts";
import { goDuration } from "./dialect.ts";
import type { LimitState } from "./limits.ts";
import { hex } from "./reply.ts";
import type { ParsedRequest } from "./request.ts";
import { responses } from "./responses.ts";

const LIMITS_URL = "Visit https://platform.openai.com/account/rate-limits to learn more.";

function error(status: number, message: string, type: string, code: string | null, param: string | null = null): ErrorReply {
  return { status, body: { error: { message, type, param, code } } };
}

/** A deterministic unit vector per input, so equal inputs embed equally. */
function vector(input: unknown, dims: number): number[] {
  const s = JSON.stringify(input);
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  const v = Array.from({ length: dims }, (_, i) => Math.sin(h + i * 1.618));
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

export function embeddings(req: ParsedRequest): EndpointResult {
  const input = req.body.input;
  const inputs = Array.isArray(input) && !input.every((x) => typeof x === "number") ? input : [input];
  const dims = typeof req.body.dimensions === "number" ? req.body.dimensions : 16;
  const base64 = req.body.encoding_format === "base64";
  const data = inputs.map((item, index) => {
    const v = vector(item, dims);
    const embedding = base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v;
    return { object: "embedding", index, embedding };
  });
  const usage = { prompt_tokens: req.promptTokens, total_tokens: req.promptTokens };
  return { json: { object: "list", data, model: req.model, usage } };
}

function mask(key: string): string {
  return key.length > 8 ? `${key.slice(0, 3)}${"*".repeat(key.length - 7)}${key.slice(-4)}` : "****";
}

export const chat = chatCompletions(OPENAI_STYLE);

export const openai: Dialect = {
  name: "openai",
  host: "api.openai.com",
  scope: "credential",
  endpoints: { "/chat/completions": chat, "/responses": responses, "/embeddings": embeddings },
  // A chat stream reports usage only when asked (stream_options.include_usage); a Responses stream always does.
  reportsStreamUsage: (endpoint, req) => endpoint !== "/chat/completions" || chatStreamReportsUsage(OPENAI_STYLE, req),

  credential(h) {
    const m = /^Bearer\s+(.+)$/i.exec(h.authorization ?? "");
    return m?.[1]?.trim() || (typeof h["api-key"] === "string" ? h["api-key"] : undefined);
  },

  check(_h, req, endpoint) {
    if (!req.model) return error(400, "you must provide a model parameter", "invalid_request_error", null);
    const required = { "/chat/completions": "messages", "/responses": "input", "/embeddings": "input" }[endpoint];
    if (required && !(required in req.body)) {
      return error(400, `Missing required parameter: '${required}'.`, "invalid_request_error", "missing_required_parameter", required);
    }
    return null;
  },

  requestId: () => ({ "x-request-id": `req_${hex(32)}`, "openai-version": "2020-10-01" }),

  stamp: (body) => body,

  limitHeaders(states: LimitState[]) {
    const out: Record<string, string> = {};
    for (const s of states) {
      if (s.kind !== "requests" && s.kind !== "tokens") continue; // OpenAI has no per-day or per-month window
      out[`x-ratelimit-limit-${s.kind}`] = String(s.limit);
      out[`x-ratelimit-remaining-${s.kind}`] = String(s.remaining);
      out[`x-ratelimit-reset-${s.kind}`] = goDuration(s.resetMs);
    }
    return out;
  },

  unauthorized(credential) {
    if (credential === undefined) {
      return error(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.", "invalid_request_error", null);
    }
    return error(401, `Incorrect API key provided: ${mask(credential)}. You can find your API key at https://platform.openai.com/account/api-keys.`, "invalid_request_error", "invalid_api_key");
  },

  invalid: (message) => error(400, message, "invalid_request_error", null),

  notFound: (method, path) => error(404, `Invalid URL (${method} ${path})`, "invalid_request_error", null),

  rateLimited(r: Refusal, model, org) {
    const type = r.kind === "requests" || r.kind === "dayRequests" ? "requests" : "tokens";
    const unit = r.kind === "requests" ? "requests per min (RPM)" : "tokens per min (TPM)";
    const where = `for ${model} in organization ${org} on ${unit}`;
    // A request larger than the bucket, whatever it waits: the same 429, type and code, with its own
    // sentence. OpenAI's pages name no code for it; the wording is as clients quote it (third party:
    // vanna-ai/vanna-flask#11, openai/codex#38366), and its forum says one request over the limit is
    // denied, max_tokens counted (community.openai.com/t/360359).
    if (!Number.isFinite(r.waitMs)) {
      return error(429, `Request too large ${where}: Limit ${r.limit}, Requested ${r.requested}. The input or output tokens must be reduced in order to run successfully. ${LIMITS_URL}`, type, "rate_limit_exceeded");
    }
    const msg = `Rate limit reached ${where}: Limit ${r.limit}, Used ${r.used}, Requested ${r.requested}. Please try again in ${goDuration(r.waitMs)}. ${LIMITS_URL}`;
    return error(429, msg, type, "rate_limit_exceeded");
  },

  tooManyConcurrent: (model, org) =>
    error(429, `Too many concurrent requests for ${model} in organization ${org}. Please try again later.`, "requests", "rate_limit_exceeded"),

  unknownModel: (model) => error(404, `The model \`${model}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found"),

  identity: (org) => ({ "openai-organization": org, "openai-project": `proj_${org}` }),

  quotaExhausted: () =>
    error(429, "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.", "insufficient_quota", "insufficient_quota"),

  fault(status) {
    const message = {
      500: "The server had an error while processing your request. Sorry about that!",
      498: "The server is overloaded or not ready yet.",
      503: "The server is overloaded or not ready yet.",
      529: "The engine is currently overloaded, please try again later.",
    }[status];
    return error(status, message, "server_error", null);
  },
};
