/**
 * @module What a refusal means, read from its dialect's rules (providers/dialects.ts): rate limit,
 * capacity, spent money or a cap, a key that cannot be used, a request too large for the key, transient, or fatal. Spent money and
 * bad keys take a pool member out, so they are read only from what the provider fills itself (a
 * code, a Google reason or quota id, the status) or a fixed sentence matched whole: never from a
 * message that may echo what the caller sent (a 404 for `"model":"insufficient_quota"` names the model).
 */
import type { Dialect, Meaning, RefusalRule, Tier } from "../providers/dialect";
import { errorObject, errorDetails, isObj, type Obj, text } from "./headers";
import type { OutcomeClass, QuotaReading, RateLimitInfo } from "./types";

/** Timeouts, gateway errors, Cloudflare 520–524 and Anthropic's 529 overloaded: worth a retry, not a cut. */
const TRANSIENT = new Set([408, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529]);

const CLASS_OF: Record<Meaning, OutcomeClass> = {
  rate_limit: "rate_limit", capacity: "capacity", spent: "hard_quota", bad_key: "fatal", transient: "transient", too_large: "too_large",
};

/** What one refusal means, and the evidence a pool names a member's out by (spent money, a bad key). */
export interface Refusal {
  cls: OutcomeClass;
  evidence: string | null;
}

/** The codes that name an error, from the `error` object (or the body itself when a gateway sends it unwrapped). */
function errorCodes(body: unknown, err: Obj | null): string[] {
  const src = err ?? (isObj(body) ? body : null);
  if (!src) return [];
  const details = isObj(src.details) ? src.details : {};
  return [src.code, src.type, details.error_code, src.status].map((v) => text(v).toLowerCase()).filter((c) => c !== "");
}

/** The whole message: `error.message`, or `error` itself where a provider sends a plain string (xAI). */
function message(body: unknown, err: Obj | null): string {
  if (err) return text(err.message);
  const b = typeof body === "string" ? safeParse(body) : body;
  return isObj(b) ? text(b.error) : "";
}

function safeParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

/** The evidence `rule` finds in this answer, or null when it does not hold. */
function matches(rule: RefusalRule, status: number, body: unknown, err: Obj | null): string | null {
  if (rule.status && !rule.status.includes(status)) return null;
  let evidence = rule.evidence ?? rule.means;
  if (rule.code) {
    const code = errorCodes(body, err).find((c) => rule.code!.includes(c));
    if (!code) return null;
    evidence = rule.evidence ?? code;
  }
  if (rule.sentence && !rule.sentence.test(message(body, err))) return null;
  if (rule.quotaId) {
    const ids = errorDetails(err).flatMap((d) => (Array.isArray(d.violations) ? d.violations.filter(isObj).map((v) => text(v.quotaId)) : []));
    if (!ids.some((id) => rule.quotaId!.test(id))) return null;
  }
  if (rule.reason) {
    const reason = errorDetails(err).map((d) => text(d.reason)).find((r) => rule.reason!.includes(r));
    if (!reason) return null;
    evidence = rule.evidence ?? reason.toLowerCase();
  }
  return evidence;
}

/** A refusal whose own reading shows a cap (a day's, a month's allowance) exhausted. */
const capSpent = (r: QuotaReading | null | undefined) => !!r?.cap && r.remaining !== null && r.remaining < 1;

/** The rules an attempt's answer is read by: the row's, then, for an attempt sent at a tier not standard, that tier's capacity refusals. */
const rulesFor = (d: Dialect, tier: Tier | undefined): readonly RefusalRule[] =>
  !tier || tier === "standard" || !d.tiers ? d.refusals : [...d.refusals, ...d.tiers.refusals.filter((r) => r.tier === tier)];

/**
 * What an answer means for retries, for the limiter and for a pool: the first of the dialect's
 * rules that holds, else by status (429 a rate limit, the TRANSIENT set transient, else fatal). A
 * rate limit whose reading (`info`, headers and body) shows a cap exhausted is spent. `tier`: the
 * tier the attempt was sent at; a tier's capacity refusal (OpenAI flex's 429) is read only then, so
 * the same answer at standard stays a rate limit.
 */
export function refusal(status: number, body: unknown, d: Dialect, info?: RateLimitInfo, tier?: Tier): Refusal {
  if (status >= 200 && status < 400) return { cls: "success", evidence: null };
  try {
    const err = errorObject(body);
    for (const rule of rulesFor(d, tier)) {
      const evidence = matches(rule, status, body, err);
      if (evidence === null) continue;
      const cls = CLASS_OF[rule.means];
      if (cls === "rate_limit" && info && (capSpent(info.requests) || capSpent(info.tokens))) return { cls: "hard_quota", evidence: "cap_spent" };
      return { cls, evidence: rule.means === "spent" || rule.means === "bad_key" ? evidence : null };
    }
  } catch {
    // An odd body must not break classification; the status alone still decides below.
  }
  if (status === 429) {
    if (info && (capSpent(info.requests) || capSpent(info.tokens))) return { cls: "hard_quota", evidence: "cap_spent" };
    return { cls: "rate_limit", evidence: null };
  }
  return { cls: TRANSIENT.has(status) ? "transient" : "fatal", evidence: null };
}

/**
 * The body as the rules read it, with the error type its dialect's answers tell in a header
 * (Bedrock's `x-amzn-errortype: ThrottlingException:http://...`, its body holding a message only)
 * as its `type`. A copy for classifying: the caller gets the body as it came.
 */
export function withErrorType(body: unknown, headers: Headers, d: Dialect): unknown {
  const name = d.errorTypeHeader && headers.get(d.errorTypeHeader)?.split(":")[0]?.trim();
  if (!name) return body;
  return isObj(body) ? { ...body, type: name } : { type: name };
}

/** What a response means for retries and for the limiter; `body` is parsed JSON, raw text or null. */
export function classify(status: number, body: unknown, d: Dialect, info?: RateLimitInfo, tier?: Tier): OutcomeClass {
  return refusal(status, body, d, info, tier).cls;
}

/**
 * The evidence that a key cannot be used whatever is asked of it, or null: spent money or a cap,
 * or a refusal of the key itself. Not every 401 or 403 is: a restricted key lacking one endpoint's
 * permission, or a model the account may not use, says nothing of the next request, and a caller
 * could draw it on purpose.
 */
export function keyUnusable(status: number, body: unknown, d: Dialect, info?: RateLimitInfo): string | null {
  return refusal(status, body, d, info).evidence;
}
