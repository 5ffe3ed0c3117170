// Google's error model (google.rpc.Status) as the Gemini API sends it, on both its native route and
// its OpenAI-compatible one: `{"error": {"code", "message", "status", "details": [...]}}`.
//
// Sources:
// - The detail types and their fields: googleapis/googleapis `google/rpc/error_details.proto`
//   (QuotaFailure.Violation: quota_metric, quota_id, quota_dimensions, quota_value (an int64, a
//   string in JSON); RetryInfo.retry_delay, a Duration: "34.07s"; Help.links).
// - A 429's message and its Help link as the API words them: ai.google.dev
//   `gemini-api/docs/rate-limits`, quoted in gke-labs/gemini-for-kubernetes-development#1215
//   (third party); QuotaFailure with quotaMetric, quotaId, quotaDimensions and quotaValue: observed
//   bodies quoted by third parties (e.g. "GenerateRequestsPerDayPerProjectPerModel-FreeTier").
// - quotaId names the window: Google's own gemini-cli (`packages/core/src/utils/googleQuotaErrors.ts`)
//   treats an id with "PerDay" as terminal and one with "PerMinute" as retryable, RetryInfo's delay
//   aside. A per-day refusal still carries a short RetryInfo, so only the id tells them apart.
// - No rate-limit headers on any answer (googleapis/python-genai#1721 asks for them).
// - A bad key: 400 INVALID_ARGUMENT "API key not valid. Please pass a valid API key." with an
//   ErrorInfo API_KEY_INVALID (observed bodies, third party).
import type { Refusal } from "./dialect.ts";

const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL", 503: "UNAVAILABLE",
};

export function googleError(code: number, message: string, details: object[] = []) {
  return { error: { code, message, status: STATUS[code] ?? "UNKNOWN", ...(details.length ? { details } : {}) } };
}

export const RATE_LIMITS_URL = "https://ai.google.dev/gemini-api/docs/rate-limits";

/** The quota a refusal broke, as Gemini names it (the free tier's ids, the ones its users quote). */
function quota(kind: Refusal["kind"]): { metric: string; id: string } {
  if (kind === "dayRequests") return { metric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", id: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" };
  if (kind === "requests") return { metric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", id: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier" };
  return { metric: "generativelanguage.googleapis.com/generate_content_free_tier_input_token_count", id: "GenerateContentInputTokensPerModelPerMinute-FreeTier" };
}

/** Seconds with two decimals, as Gemini writes a retry delay ("34.07s"). */
const seconds = (ms: number) => `${(Math.ceil(ms / 10) / 100).toString()}s`;

/** A 429 RESOURCE_EXHAUSTED for a refusal of `kind` on `model`: QuotaFailure, Help and RetryInfo. */
export function resourceExhausted(r: Pick<Refusal, "kind" | "limit" | "waitMs">, model: string) {
  const q = quota(r.kind);
  // A day's quota does not come back in seconds, yet its RetryInfo says a short delay as the API's does.
  const waitMs = r.kind === "dayRequests" || !Number.isFinite(r.waitMs) ? 59_000 : Math.max(1, r.waitMs);
  const message = `You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: ${RATE_LIMITS_URL}. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: ${q.metric}, limit: ${r.limit}, model: ${model}\nPlease retry in ${seconds(waitMs)}.`;
  return googleError(429, message, [
    { "@type": "type.googleapis.com/google.rpc.Help", links: [{ description: "Learn more about Gemini API quotas", url: RATE_LIMITS_URL }] },
    {
      "@type": "type.googleapis.com/google.rpc.QuotaFailure",
      violations: [{ quotaMetric: q.metric, quotaId: q.id, quotaDimensions: { location: "global", model }, quotaValue: String(r.limit) }],
    },
    { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: seconds(waitMs) },
  ]);
}

/**
 * A key's daily quota spent: what a Gemini key "without quota" (quotaExhaustedKeys) answers every
 * request. A quotaValue of "0" would mean no quota at all for the model, another refusal; 1000 is a day's.
 */
export const dayQuotaSpent = (model: string) => resourceExhausted({ kind: "dayRequests", limit: 1000, waitMs: Infinity }, model);

export const badKey = () =>
  googleError(400, "API key not valid. Please pass a valid API key.", [
    { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } },
  ]);

export const noKey = () =>
  googleError(403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.");
