/**
 * @module The parts the dialect rows (dialects.ts) are made of: the header families providers tell
 * their limits in, the refusal rules several rows share, how usage is read. Sources beside each.
 */
import { type HintSpec, MINUTE_MS, type RefusalRule, RETRY_AFTER, USAGE_AT, type UsageSpec, type WindowGroup } from "./dialect";

// --- Header families --------------------------------------------------------------------------

/**
 * OpenAI's `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, resets as Go durations
 * (platform.openai.com/docs/guides/rate-limits). `refusesLarger`: see TOO_LARGE below.
 */
export const openaiFamily = (kind: "requests" | "tokens", periodMs = MINUTE_MS, refusesLarger = false): WindowGroup => [
  { limit: `x-ratelimit-limit-${kind}`, remaining: `x-ratelimit-remaining-${kind}`, reset: `x-ratelimit-reset-${kind}`, resetFormat: "duration", periodMs, ...(refusesLarger && { refusesLarger }) },
];

/** Anthropic's `anthropic-ratelimit-<kind>-{limit,remaining,reset}`, resets RFC 3339 (docs.anthropic.com/en/api/rate-limits). */
export const anthropicWindow = (kind: string) => ({
  limit: `anthropic-ratelimit-${kind}-limit`, remaining: `anthropic-ratelimit-${kind}-remaining`, reset: `anthropic-ratelimit-${kind}-reset`,
  resetFormat: "rfc3339" as const, periodMs: MINUTE_MS,
});

/** `x-ratelimit-limit`/`-remaining`/`-reset` and the unprefixed `ratelimit-*`: custom providers' (LiteLLM, vLLM fronts). */
export const genericFamily = (prefix: string): WindowGroup => [
  { limit: `${prefix}limit`, remaining: `${prefix}remaining`, reset: `${prefix}reset`, resetFormat: "any", periodMs: MINUTE_MS },
];

/** OpenAI and Azure send `retry-after-ms`; Azure's older surfaces `x-ms-retry-after-ms`. */
export const HINTS: readonly HintSpec[] = [{ header: "retry-after-ms", unit: "ms" }, { header: "x-ms-retry-after-ms", unit: "ms" }, RETRY_AFTER];

// --- Refusals -----------------------------------------------------------------------------------

/**
 * Spent money, by code: OpenAI's `insufficient_quota` (429) and `billing_hard_limit_reached`
 * (400), Anthropic's `enforced_spend_limit_reached`, and the codes OpenAI-compatible gateways
 * reuse. On the statuses they come with only.
 */
export const SPENT_CODES: RefusalRule = {
  means: "spent", status: [400, 402, 403, 429],
  code: ["insufficient_quota", "billing_hard_limit_reached", "credit_balance_exhausted", "access_terminated", "enforced_spend_limit_reached"],
};
/** A 401 naming the key itself (OpenAI's `invalid_api_key`, Anthropic's `authentication_error`, Azure's `"401"`). */
export const KEY_CODES: RefusalRule = { means: "bad_key", status: [401], code: ["invalid_api_key", "authentication_error", "401"] };
/**
 * Anthropic's credit exhaustion has no code: a 400 whose whole message is this fixed sentence
 * (docs.anthropic.com/en/api/errors; the second sentence is sometimes left off).
 */
export const ANTHROPIC_NO_CREDIT: RefusalRule = {
  means: "spent", status: [400], evidence: "credit_balance_too_low",
  sentence: /^Your credit balance is too low to access the Anthropic API\.(?: Please go to Plans & Billing to upgrade or purchase credits\.)?$/,
};
/**
 * Google: a `QuotaFailure` naming a daily quota ("GenerateRequestsPerDayPerProjectPerModel-FreeTier")
 * is spent for the day; `RESOURCE_EXHAUSTED` otherwise is a rate limit; an `ErrorInfo` reason for a
 * key or project that cannot be used is a bad key (ai.google.dev/gemini-api/docs/troubleshooting,
 * cloud.google.com/apis/design/errors).
 */
export const GOOGLE: readonly RefusalRule[] = [
  { means: "spent", quotaId: /perday/i, evidence: "daily_quota", code: ["resource_exhausted"] },
  { means: "spent", status: [429], quotaId: /perday/i, evidence: "daily_quota" },
  { means: "bad_key", status: [400, 401, 403], reason: ["API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED", "CONSUMER_SUSPENDED", "SERVICE_DISABLED"] },
  { means: "rate_limit", code: ["resource_exhausted"] },
];
/** A 402 from a provider that uses it for nothing else: no balance, no credits. */
export const PAYMENT_REQUIRED: RefusalRule = { means: "spent", status: [402], evidence: "payment_required" };
/**
 * One request above the key's tokens-per-minute limit, refused whatever it waits. OpenAI answers a
 * 429 whose only difference from a full window's is its sentence: "Request too large for <model>
 * [in organization <org>] on tokens per min (TPM): Limit 30000, Requested 342389. The input or
 * output tokens must be reduced in order to run successfully." (type `tokens`, code
 * `rate_limit_exceeded`). OpenAI's pages name no code for it; the sentence is as clients quote it
 * (third party: vanna-ai/vanna-flask#11, openai/codex#38366, SWE-agent/SWE-agent#1296, which
 * retried it in vain), and its forum says a single request over the limit is denied, max_tokens
 * counted (community.openai.com/t/360359). Matched from its start: a model name holds no space, so
 * no text of the caller's makes another 429 read so.
 */
export const OPENAI_TOO_LARGE: RefusalRule = {
  means: "too_large", status: [429], sentence: /^Request too large for \S+ (?:in organization \S+ )?on tokens per min \(TPM\): Limit \d+, Requested \d+\./,
};
/**
 * A 413: the request is too large, whatever it waits. Groq's documented 413 "Request Entity Too
 * Large" (console.groq.com/docs/errors) is also its answer to a request above its TPM ("Request too
 * large for model ... on tokens per minute (TPM): Limit 6000, Requested 14368", type `tokens`, code
 * `rate_limit_exceeded`; third party: continuedev/continue#10218, assafelovic/gpt-researcher#985);
 * Anthropic's `request_too_large` is a body over 32 MB (docs.anthropic.com/en/api/errors).
 */
export const TOO_LARGE_413: RefusalRule = { means: "too_large", status: [413] };

// --- Usage --------------------------------------------------------------------------------------

export const ASKS: UsageSpec = { at: USAGE_AT, ask: { kind: "stream_options" } };
export const READS: UsageSpec = { at: USAGE_AT, ask: { kind: "none" } };

export const none: readonly WindowGroup[] = [];
