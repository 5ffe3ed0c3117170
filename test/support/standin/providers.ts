// The OpenAI-style providers the gateway lists beyond OpenAI and Azure: a row each over
// openai-like.ts. Each row says where its behaviour comes from; "third party" marks what only
// others document (client code, issue threads), "stand-in wording" what nobody documents and the
// stand-in words itself.
import type { ChatStyle } from "./chat.ts";
import type { Dialect, Refusal } from "./dialect.ts";
import { goDuration } from "./dialect.ts";
import { googleError, badKey, dayQuotaSpent, resourceExhausted } from "./google.ts";
import type { LimitKind } from "./limits.ts";
import { openai } from "./openai.ts";
import { openaiEnvelope, openaiLike } from "./openai-like.ts";
import type { ErrorFields, HeaderField } from "./openai-like.ts";

const OPENAI_BILLING = () => {
  const { error } = openai.quotaExhausted("").body as { error: ErrorFields };
  return { status: 429, ...error };
};

const UNIT: Record<LimitKind, string> = {
  requests: "requests per minute (RPM)", dayRequests: "requests per day (RPD)", tokens: "tokens per minute (TPM)",
  input: "tokens per minute (TPM)", output: "tokens per minute (TPM)", monthTokens: "tokens per month",
};

/** A window's limit and remaining headers (per second where `per` says so). */
const pair = (limit: string, remaining: string, window: LimitKind, per?: "second"): HeaderField[] => [
  { name: limit, window, field: "limit", per },
  { name: remaining, window, field: "remaining", per },
];

/** No usage fields beyond the three counts. */
const plainUsage: ChatStyle["usageExtra"] = () => ({});

// Groq (api.groq.com/openai/v1):
// - Headers (console.groq.com `docs/rate-limits`, "Rate Limit Headers"): x-ratelimit-limit-requests
//   and -remaining-requests are requests per DAY, -tokens per MINUTE, resets as Go durations
//   ("2m59.56s", "7.66s"); retry-after only on a 429. RPM is enforced but told in no header.
//   (The header table as quoted by third parties: dev.to "Groq 429s: your retry loop is blind".)
// - Limits hold per organization and per model (same page).
// - Streams: usage in the last chunk's `x_groq.usage`, and in a chunk of its own when
//   stream_options.include_usage (groq/groq-python `types/chat/chat_completion_chunk.py`: XGroq.usage
//   "Only sent in the final chunk"); usage carries queue_time, prompt_time, completion_time,
//   total_time (`types/completion_usage.py`).
// - Flex tier (`service_tier: "flex"`): "If flex capacity is unavailable, requests will fail quickly
//   with status 498 and error capacity_exceeded. Add jittered backoff and retries"
//   (console.groq.com `docs/flex-processing`). The 498's message: stand-in wording.
// - A 429's body: `{"error": {"message": "Rate limit reached for model ... on tokens per minute (TPM):
//   Limit ..., Used ..., Requested .... Please try again in 7.66s. ...", "type": "tokens", "code":
//   "rate_limit_exceeded"}}` (as clients quote it, third party). A bad key: 401 invalid_api_key.
// - A request above the TPM, whatever it waits: 413 (console.groq.com/docs/errors: "413 Request
//   Entity Too Large") with "Request too large for model `...` in organization `...` service tier
//   `on_demand` on tokens per minute (TPM): Limit 6000, Requested 14368, please reduce your message
//   size and try again. ...", type `tokens`, code `rate_limit_exceeded` (as clients quote it, third
//   party: continuedev/continue#10218, assafelovic/gpt-researcher#985).
// - Spent credits: not documented; played as OpenAI's insufficient_quota.
const groqTimes = () => ({ queue_time: 0.012, prompt_time: 0.004, completion_time: 0.02, total_time: 0.024 });
export const groq = openaiLike({
  name: "groq", host: "api.groq.com", scope: "model", embeddings: false,
  chat: { streamUsage: "x_groq", usageExtra: groqTimes, common: { system_fingerprint: "fp_standin01", x_groq: { id: "req_standin" } } },
  headers: [
    ...pair("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "dayRequests"),
    { name: "x-ratelimit-reset-requests", window: "dayRequests", field: "reset", format: "go" },
    ...pair("x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "tokens"),
    { name: "x-ratelimit-reset-tokens", window: "tokens", field: "reset", format: "go" },
  ],
  envelope: (_s, e) => ({ error: { message: e.message, type: e.type ?? "invalid_request_error", code: e.code ?? null } }),
  unauthorized: { status: 401, message: "Invalid API Key", type: "invalid_request_error", code: "invalid_api_key" },
  rateLimited: (r, model, org) => {
    const type = r.kind === "requests" || r.kind === "dayRequests" ? "requests" : "tokens";
    if (!Number.isFinite(r.waitMs))
      return { status: 413, message: `Request too large for model \`${model}\` in organization \`${org}\` service tier \`on_demand\` on ${UNIT[r.kind]}: Limit ${r.limit}, Requested ${r.requested}, please reduce your message size and try again. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing`, type, code: "rate_limit_exceeded" };
    return {
      message: `Rate limit reached for model \`${model}\` in organization \`${org}\` service tier \`on_demand\` on ${UNIT[r.kind]}: Limit ${r.limit}, Used ${r.used}, Requested ${r.requested}. Please try again in ${goDuration(r.waitMs)}. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing`,
      type, code: "rate_limit_exceeded",
    };
  },
  billing: OPENAI_BILLING,
  faults: { 498: { message: "Flex tier capacity exceeded. This is a known issue and we are working on it. Please retry in a few seconds or use the on_demand service tier.", type: "internal_server_error", code: "capacity_exceeded" } },
});

// Mistral (api.mistral.ai/v1): limits per workspace in tokens per minute and per month, and
// requests per second (docs.mistral.ai `deployment/laplateforme/tier`). Its headers are not in its
// docs; third-party clients read `ratelimitbysize-limit`, `-remaining`, `-reset` (whole seconds)
// for the minute's tokens and `x-ratelimitbysize-limit-month` / `-remaining-month` (and -minute) for
// the month's, and note it sends no request-count header. Its error envelope: `{"object": "error",
// "message", "type", "param", "code"}`; a 429's wording ("Requests rate limit exceeded", type
// rate_limited, code "1300") and the monthly cap's (same status, the month's remaining at 0) are as
// clients quote them (third party) or stand-in wording. Streams carry `usage` in the last chunk
// unasked (mistralai/client-python `models/completionchunk.py` has `usage`; unasked as observed,
// third party). Spent credits: not documented; played as OpenAI's.
export const mistral = openaiLike({
  name: "mistral", host: "api.mistral.ai", scope: "credential", embeddings: true,
  chat: { streamUsage: "always", usageExtra: plainUsage },
  headers: [
    ...pair("ratelimitbysize-limit", "ratelimitbysize-remaining", "tokens"),
    { name: "ratelimitbysize-reset", window: "tokens", field: "reset", format: "seconds" },
    ...pair("x-ratelimitbysize-limit-minute", "x-ratelimitbysize-remaining-minute", "tokens"),
    ...pair("x-ratelimitbysize-limit-month", "x-ratelimitbysize-remaining-month", "monthTokens"),
  ],
  envelope: (_s, e) => ({ object: "error", message: e.message, type: e.type ?? "invalid_request_error", param: null, code: e.code ?? null }),
  unauthorized: { status: 401, message: "Unauthorized", type: "invalid_request_error" },
  rateLimited: (r) =>
    r.kind === "monthTokens"
      ? { message: "Monthly token limit exceeded for this workspace.", type: "rate_limited", code: "1300" } // stand-in wording
      : { message: "Requests rate limit exceeded", type: "rate_limited", code: "1300" },
  billing: OPENAI_BILLING,
});

// OpenRouter (openrouter.ai/api/v1): no rate-limit headers on answers; errors `{"error": {"code":
// <status>, "message", "metadata"?}}` (openrouter.ai `docs/api_reference/errors`): 402 for credits
// ("Insufficient credits. Add more using https://openrouter.ai/settings/credits", as clients quote
// it); a daily cap such as free-models-per-day is a 429 whose limits are in
// `error.metadata.headers` (`X-RateLimit-Limit`, `-Remaining`, `-Reset` in epoch milliseconds:
// Gitlawb/openclaude#936, third party; the limits themselves: `docs/api_reference/limits`).
// Usage (with `cost`) "is included in the last SSE message for streaming responses" unasked
// (`docs/use-cases/usage-accounting`). Its own 429s carry no retry-after ("only when an upstream
// provider gave it one; often absent", as a third-party client notes): only the body tells.
const openrouterCap = (r: Refusal) => {
  const daily = r.kind === "dayRequests";
  const reset = Date.now() + (Number.isFinite(r.waitMs) ? r.waitMs : 86_400_000);
  return {
    message: daily ? `Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day` : "Rate limit exceeded: free-models-per-min. ",
    code: 429,
    metadata: { headers: { "X-RateLimit-Limit": String(r.limit), "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(Math.ceil(reset)) }, provider_name: null },
  };
};
export const openrouter = openaiLike({
  name: "openrouter", host: "openrouter.ai", scope: "credential", embeddings: true, retryHeaders: "none",
  chat: { streamUsage: "always", usageExtra: (r) => ({ cost: Number(((r.inputTokens + r.outputTokens) * 1e-6).toFixed(8)), prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }) },
  headers: [],
  envelope: (status, e) => ({ error: { code: typeof e.code === "number" ? e.code : status, message: e.message, ...(e.metadata ? { metadata: e.metadata } : {}) } }),
  unauthorized: { status: 401, message: "User not found.", code: 401 },
  rateLimited: openrouterCap,
  billing: () => ({ status: 402, message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits", code: 402 }),
});

// DeepSeek (api.deepseek.com): "DeepSeek API does NOT constrain user's rate limit"; under load the
// connection is held: "Non-streaming requests: Continuously return empty lines; Streaming requests:
// Continuously return SSE keep-alive comments (: keep-alive)", closed if inference has not started
// after 10 minutes (api-docs.deepseek.com `quick_start/rate_limit`). 402 "Insufficient Balance",
// 429 "Rate Limit Reached", 503 "Server Overloaded" (`quick_start/error_codes`); the 402's body
// `{"error": {"message": "Insufficient Balance", "type": "unknown_error", "param": null, "code":
// "invalid_request_error"}}` as clients quote it (third party). Usage adds prompt_cache_hit_tokens
// and prompt_cache_miss_tokens; streams report it when asked (`api/create-chat-completion`,
// stream_options.include_usage).
export const deepseek = openaiLike({
  name: "deepseek", host: "api.deepseek.com", scope: "credential", embeddings: false,
  chat: { streamUsage: "asked", usageExtra: (r) => ({ prompt_tokens_details: { cached_tokens: 0 }, prompt_cache_hit_tokens: 0, prompt_cache_miss_tokens: r.inputTokens }), common: { system_fingerprint: "fp_standin01" } },
  headers: [],
  keepAlive: { plain: "\n", stream: ": keep-alive\n\n" },
  envelope: openaiEnvelope,
  unauthorized: { status: 401, message: "Authentication Fails, Your api key is invalid", type: "authentication_error", code: "invalid_request_error" },
  rateLimited: () => ({ message: "Rate Limit Reached", type: "rate_limit_error", code: "rate_limit_exceeded" }),
  billing: () => ({ status: 402, message: "Insufficient Balance", type: "unknown_error", code: "invalid_request_error" }),
  faults: { 503: { message: "Server Overloaded", type: "server_error" } },
});

// Together (api.together.xyz/v1): dynamic limits per organization and model; "Requests at or below
// your dynamic rate return 503 Service Unavailable ... attributed to platform capacity", "Requests
// above your dynamic rate return 429 Too Many Requests with one of these error types: error_type:
// dynamic_request_limited ... dynamic_token_limited" (docs.together.ai `docs/serverless/rate-limits`).
// The stand-in's rpm plays the dynamic rate (it does not grow with traffic); faults {"503": x} the
// capacity refusals below it. Older docs: "We measure rate limits in seconds, but display them in
// minutes" (60 RPM is 1 RPS) with x-ratelimit-limit, -remaining and -reset (seconds) on every answer
// (docs.together.ai `docs/rate-limits`; support.together.ai "Rate limits"): sent per second here.
// The 429's envelope around error_type: stand-in wording (OpenAI's). Streams carry `usage` in their
// last chunk unasked (recorded real streams, third party: llama-stack's integration recordings show
// `"usage": null` on every other chunk; not in Together's docs). Spent credits: not documented; OpenAI's.
export const together = openaiLike({
  name: "together", host: "api.together.xyz", scope: "model", embeddings: true,
  chat: { streamUsage: "always", usageExtra: plainUsage },
  headers: [
    ...pair("x-ratelimit-limit", "x-ratelimit-remaining", "requests", "second"),
    { name: "x-ratelimit-reset", window: "requests", field: "reset", format: "seconds" },
  ],
  envelope: openaiEnvelope,
  unauthorized: { status: 401, message: "Invalid API key provided. You can find your API key at https://api.together.xyz/settings/api-keys.", type: "invalid_request_error", code: "invalid_api_key" },
  rateLimited: (r) => {
    const type = r.kind === "requests" ? "dynamic_request_limited" : "dynamic_token_limited";
    return { message: `You have exceeded your dynamic rate limit for this model (${type}). Please slow down.`, type, code: type };
  },
  billing: OPENAI_BILLING,
  faults: { 503: { message: "The server is overloaded or not ready yet.", type: "server_error" } },
});

// Fireworks (api.fireworks.ai/inference/v1): adaptive limits on prompt tokens and generated tokens
// ("Total Prompt TPM", "Generated TPM"), "Your current effective rate limits (described in tokens
// per second) are in the response headers X-Ratelimit-Limit-Tokens-Prompt and
// X-Ratelimit-Limit-Tokens-Generated"; 429 above them, 503 when overloaded (docs.fireworks.ai
// `serverless/rate-limits`); an account-wide 6,000 RPM (`guides/quotas_usage/account-quotas`).
// The remaining-* headers and x-ratelimit-over-limit ("yes"/"no") as clients read them (third
// party). 402 "Account is not on a paid plan or has exceeded usage limits" (a monthly budget;
// `guides/inference-error-codes`), 412 for a suspended account. Streams carry `usage` in "the final
// chunk (the one with finish_reason set)" unasked, where Fireworks puts a stream's per-request extras
// (its perf_metrics FAQ; usage there as recorded streams suggest, third party, unconfirmed by its
// docs). Bodies: `{"error": {"object": "error", "type", "message"}}` (third party).
export const fireworks = openaiLike({
  name: "fireworks", host: "api.fireworks.ai", scope: "credential", embeddings: true,
  chat: { streamUsage: "always", usageExtra: plainUsage },
  headers: [
    ...pair("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "requests"),
    ...pair("x-ratelimit-limit-tokens-prompt", "x-ratelimit-remaining-tokens-prompt", "input", "second"),
    ...pair("x-ratelimit-limit-tokens-generated", "x-ratelimit-remaining-tokens-generated", "output", "second"),
    { name: "x-ratelimit-over-limit", window: "output", field: "over" },
  ],
  envelope: (_s, e) => ({ error: { object: "error", type: e.type ?? "invalid_request_error", message: e.message } }),
  unauthorized: { status: 401, message: "The API key you provided is invalid.", type: "invalid_request_error" },
  rateLimited: (r) => ({ message: `Rate limit exceeded on ${UNIT[r.kind]}. Please slow down and retry.`, type: "rate_limit_error" }),
  billing: () => ({ status: 402, message: "Account has exceeded its monthly spending limit. Please raise the budget or add credits.", type: "payment_required" }),
  faults: { 503: { message: "Service Overloaded", type: "server_error" } },
});

// xAI (api.x.ai/v1): per-team, per-model limits in requests per second (RPM / 60: "you cannot spend
// a full minute's requests in a single second") and tokens per minute; 429 past any
// (docs.x.ai `developers/rate-limits`); no rate-limit headers documented. Errors have a STRING
// `error` beside a `code`: spent credits or a monthly spending limit is a 429 "Your team <id> has
// either used all available credits or reached its monthly spending limit. To continue making API
// requests, please purchase more credits or raise your spending limit." (continuedev/continue#10373,
// third party); a bad key is a 400 `{"code": "Client specified an invalid argument", "error":
// "Incorrect API key provided: xa***. You can obtain an API key from https://console.x.ai."}`
// (clients' tests, third party). The 429's `code` for spent credits and the rate limit's wording:
// stand-in wording (gRPC's RESOURCE_EXHAUSTED text, as the 400's code is INVALID_ARGUMENT's).
// Streams report usage when asked: "When stream_options.include_usage is set, xAI closes the stream
// with a usage-only chunk" (brainlid/langchain#626; superagent-ai/grok-cli#70, third party).
const XAI_TEAM = "0d5a3c1e-7f2b-4c6d-9e8a-5a17d1e00001"; // a team id is a UUID
export const xai = openaiLike({
  name: "xai", host: "api.x.ai", scope: "model", embeddings: true,
  chat: { streamUsage: "asked", usageExtra: (r) => ({ prompt_tokens_details: { text_tokens: r.inputTokens, cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }), common: { system_fingerprint: "fp_standin01" } },
  headers: [],
  envelope: (_s, e) => ({ code: e.type ?? "Some resource has been exhausted", error: e.message }),
  unauthorized: { status: 400, message: "Incorrect API key provided: xa***. You can obtain an API key from https://console.x.ai.", type: "Client specified an invalid argument" },
  rateLimited: (_r, model) => ({ message: `Too many requests: your team ${XAI_TEAM} has exceeded its rate limit for ${model}. Please slow down.`, type: "Some resource has been exhausted" }),
  billing: () => ({ status: 429, message: `Your team ${XAI_TEAM} has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit.`, type: "Some resource has been exhausted" }),
});

// Gemini's OpenAI-compatible route (generativelanguage.googleapis.com/v1beta/openai/): OpenAI's
// bodies, the model in the body, Bearer credential (ai.google.dev `gemini-api/docs/openai`); the
// same per-project, per-model quotas as the native API and no rate-limit headers. Its errors are
// Google's, wrapped in a JSON array: `[{"error": {"code": 429, "message", "status":
// "RESOURCE_EXHAUSTED"}}]` (n4ze3m/page-assist#406, third party; the details as on the native
// route: google.ts). Streams report usage when asked (stream_options: as OpenAI's; Google's page
// does not list it: an assumption).
export const geminiOpenai: Dialect = {
  ...openaiLike({
    name: "gemini-openai", host: "generativelanguage.googleapis.com", scope: "model", embeddings: true,
    chat: { streamUsage: "asked", usageExtra: plainUsage, idPrefix: "" },
    headers: [], retryHeaders: "none",
    envelope: (status, e) => [googleError(status, e.message)],
    unauthorized: { status: 400, message: "API key not valid. Please pass a valid API key." },
    rateLimited: () => ({ message: "" }),
    billing: () => ({ status: 429, message: "" }),
  }),
  inputTpm: true,
  unauthorized: () => ({ status: 400, body: [badKey()] }),
  rateLimited: (r, model) => ({ status: 429, body: [resourceExhausted(r, model)] }),
  tooManyConcurrent: (model) => ({ status: 429, body: [resourceExhausted({ kind: "requests", limit: 0, waitMs: 1000 }, model)] }),
  quotaExhausted: (model) => ({ status: 429, body: [dayQuotaSpent(model)] }),
};

/** The OpenAI-style rows, by the path prefix a gateway's base URL gives them (`<stand-in>/<name>/...`). */
export const OPENAI_LIKE: Record<string, Dialect> = { groq, mistral, openrouter, deepseek, together, fireworks, xai };
