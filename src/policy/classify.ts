import { errorObject, googleDetails } from "./headers";
import type { OutcomeClass } from "./types";

/**
 * Money or plan exhaustion. Waiting seconds will not fix these, so they are returned at once and
 * never cut concurrency, and in a pool they take the member out. So they are read only from the
 * fields a provider fills itself (`code`, `type`, Anthropic's `details.error_code`), whole, on the
 * statuses they come with: never from a message, which may echo what the caller sent (a 404 for
 * `"model":"insufficient_quota"` names the model).
 */
const HARD_QUOTA = new Set(["insufficient_quota", "billing_hard_limit_reached", "credit_balance_exhausted", "access_terminated", "enforced_spend_limit_reached"]);
/** OpenAI's billing limit comes as a 400; the rest as 429, 402 or 403. */
const HARD_QUOTA_STATUS = new Set([400, 402, 403, 429]);
/**
 * Anthropic's credit exhaustion has no code: a 400 whose whole message is this fixed sentence.
 * Matched whole, from its start to its end, so no echo of a caller's text inside a longer
 * message can match it.
 */
const ANTHROPIC_NO_CREDIT = /^Your credit balance is too low to access the Anthropic API\.(?: Please go to Plans & Billing to upgrade or purchase credits\.)?$/;

/** Timeouts, gateway errors, Cloudflare 520–524 and Anthropic's 529 overloaded: worth a retry, not a cut. */
const TRANSIENT = new Set([408, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === "string" ? v : "");

/** The codes that name an error, from the `error` object (or the body itself when a gateway sends it unwrapped). */
function errorCodes(body: unknown, err: Obj | null): string[] {
  const src = err ?? (isObj(body) ? body : null);
  if (!src) return [];
  const details = isObj(src.details) ? src.details : {};
  return [src.code, src.type, details.error_code].map((v) => text(v).toLowerCase());
}

/** Google QuotaFailure naming a daily quota ("GenerateRequestsPerDayPerProjectPerModel-FreeTier"). */
function dailyQuota(err: Obj | null): boolean {
  return googleDetails(err).some(
    (d) => Array.isArray(d.violations) && d.violations.some((v) => isObj(v) && /perday/i.test(text(v.quotaId))),
  );
}

/**
 * The hard-quota evidence in an error answer: the provider's code (`insufficient_quota`, ...),
 * `credit_balance_too_low` for Anthropic's sentence, `daily_quota` for Google's per-day quota; or
 * null. A pool names a member's out by it.
 */
export function hardQuota(status: number, body: unknown): string | null {
  const err = errorObject(body);
  const code = HARD_QUOTA_STATUS.has(status) ? errorCodes(body, err).find((c) => HARD_QUOTA.has(c)) : undefined;
  if (code) return code;
  if (status === 400 && ANTHROPIC_NO_CREDIT.test(text(err?.message))) return "credit_balance_too_low";
  if ((status === 429 || text(err?.status) === "RESOURCE_EXHAUSTED") && dailyQuota(err)) return "daily_quota";
  return null;
}

/** Codes with which a provider refuses the key itself (OpenAI, Anthropic, Azure's "401"). */
const KEY_REFUSED = new Set(["invalid_api_key", "authentication_error", "401"]);
/** Google's ErrorInfo reasons for a key (or its project) that cannot be used at all. */
const GOOGLE_KEY_REFUSED = new Set(["API_KEY_INVALID", "API_KEY_EXPIRED", "API_KEY_SERVICE_BLOCKED", "CONSUMER_SUSPENDED", "SERVICE_DISABLED"]);

/**
 * The evidence that a key cannot be used whatever is asked of it, or null: hard quota, or a
 * refusal of the key itself (an invalid key: a 401 with its code, Google's ErrorInfo reason).
 * Not every 401 or 403 is: a restricted key lacking one endpoint's permission, or a model the
 * account may not use, says nothing of the next request, and a caller could draw it on purpose.
 */
export function keyUnusable(status: number, body: unknown): string | null {
  try {
    const quota = hardQuota(status, body);
    if (quota) return quota;
    const err = errorObject(body);
    if (status === 401) {
      const code = errorCodes(body, err).find((c) => KEY_REFUSED.has(c));
      if (code) return code;
    }
    if (status === 400 || status === 401 || status === 403) {
      const reason = googleDetails(err).map((d) => text(d.reason)).find((r) => GOOGLE_KEY_REFUSED.has(r));
      if (reason) return reason.toLowerCase();
    }
  } catch {
    // An odd body is no evidence.
  }
  return null;
}

/** What a response means for retries and for the limiter; `body` is parsed JSON, raw text or null. */
export function classify(status: number, body: unknown): OutcomeClass {
  if (status >= 200 && status < 400) return "success";
  try {
    // Quota before rate limit: OpenAI's insufficient_quota and Google's daily quota come as 429s.
    if (hardQuota(status, body)) return "hard_quota";
    if (status === 429 || text(errorObject(body)?.status) === "RESOURCE_EXHAUSTED") return "rate_limit";
  } catch {
    // An odd body must not break classification; the status alone still decides below.
    if (status === 429) return "rate_limit";
  }
  return TRANSIENT.has(status) ? "transient" : "fatal";
}
