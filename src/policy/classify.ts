import { errorObject, googleDetails } from "./headers";
import type { OutcomeClass } from "./types";

/**
 * Money or plan exhaustion. Waiting seconds will not fix these, so they are returned at once and
 * never cut concurrency. Matched as whole codes, never on "exceeded your current quota": Gemini
 * uses that phrase for its per-minute limits too.
 */
const HARD_QUOTA =
  /\b(insufficient_quota|billing_hard_limit_reached|credit_balance_exhausted|access_terminated|enforced_spend_limit_reached)\b|credit balance is too low/i;

/** Timeouts, gateway errors, Cloudflare 520–524 and Anthropic's 529 overloaded: worth a retry, not a cut. */
const TRANSIENT = new Set([408, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529]);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The strings that name an error: code, type, message and Anthropic's `details.error_code`, read
 * from the `error` object (or the body itself when a gateway sends it unwrapped). Raw text that is
 * not JSON is searched whole.
 */
function errorTexts(body: unknown, err: Obj | null): string[] {
  if (!err && typeof body === "string") return [body];
  const src = err ?? (isObj(body) ? body : null);
  if (!src) return [];
  const details = isObj(src.details) ? src.details : {};
  return [src.code, src.type, src.message, details.error_code].map(text);
}

/** Google QuotaFailure naming a daily quota ("GenerateRequestsPerDayPerProjectPerModel-FreeTier"). */
function dailyQuota(err: Obj | null): boolean {
  return googleDetails(err).some(
    (d) => Array.isArray(d.violations) && d.violations.some((v) => isObj(v) && /perday/i.test(text(v.quotaId))),
  );
}

/** What a response means for retries and for the limiter; `body` is parsed JSON, raw text or null. */
export function classify(status: number, body: unknown, statusText?: string): OutcomeClass {
  if (status >= 200 && status < 400) return "success";
  try {
    const err = errorObject(body);
    const googleLimit = status === 429 || text(err?.status) === "RESOURCE_EXHAUSTED";
    // Quota before rate limit: OpenAI's insufficient_quota and Google's daily quota come as 429s.
    const texts = [...errorTexts(body, err), text(statusText)];
    if (texts.some((t) => HARD_QUOTA.test(t)) || (googleLimit && dailyQuota(err))) return "hard_quota";
    if (googleLimit) return "rate_limit";
  } catch {
    // An odd body must not break classification; the status alone still decides below.
    if (status === 429) return "rate_limit";
  }
  return TRANSIENT.has(status) ? "transient" : "fatal";
}
