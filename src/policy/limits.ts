/**
 * @module Reads what an answer says about rate limits, in the words of its provider's dialect
 * (providers/dialects.ts): the header families the row names, each window with its period, the
 * wait hints in its headers and, on a refusal, in its body. Pure and total: a stray header must
 * not break a request that already succeeded.
 */
import { DAY_MS, type Dialect, type HintSpec, MINUTE_MS, type ResetFormat, RETRY_AFTER, SECOND_MS, type WindowGroup, type WindowSpec } from "../providers/dialect";
import {
  decimal, errorDetails, errorObject, isObj, MAX_WAIT_MS, type Obj, parseDuration, parseReset, parseRetryAfter, parseRetryInfo, parseTimestamp, text, wait,
} from "./headers";
import type { QuotaReading, RateLimitInfo, RefusedLimit } from "./types";

/** A window told empty until further away than this is a cap no request can wait out. */
export const CAP_HORIZON_MS = 60 * 60 * 1000;

const bounded = (at: number | null, now: number) => (at !== null && Math.abs(at - now) <= MAX_WAIT_MS ? at : null);

/** A reset in the row's format → epoch ms. */
function resetAt(format: ResetFormat, v: string, now: number): number | null {
  if (v === "") return null;
  switch (format) {
    case "duration": {
      const ms = parseDuration(v);
      return ms === null ? null : now + ms;
    }
    case "rfc3339":
      return bounded(parseTimestamp(v), now);
    case "seconds": {
      const s = decimal(v);
      return s === null ? null : bounded(now + s * 1000, now);
    }
    case "epoch-ms": {
      const ms = decimal(v);
      return ms === null ? null : bounded(ms, now);
    }
    default:
      return parseReset(v, now);
  }
}

const nullIfEmpty = (r: QuotaReading): QuotaReading | null =>
  r.limit === null && r.remaining === null && r.resetAt === null ? null : r;

const get = (h: Headers, name: string | undefined) => (name ? h.get(name) : null);

/** One window, as the row names its headers: none unless it tells a limit or a remaining (a reset alone says nothing). */
function window(h: Headers, now: number, w: WindowSpec): QuotaReading | null {
  if (decimal(get(h, w.limit)) === null && decimal(get(h, w.remaining)) === null) return null;
  const r = nullIfEmpty({
    limit: decimal(get(h, w.limit)),
    remaining: decimal(get(h, w.remaining)),
    resetAt: resetAt(w.resetFormat ?? "any", text(get(h, w.reset)), now),
  });
  return r && { ...r, periodMs: w.periodMs, ...(w.cap && { cap: true }), ...(w.refusesLarger && { refusesLarger: true }) };
}

/** Share of the window left; a window without both numbers counts as loosest. */
function share(r: QuotaReading): number {
  if (r.limit === null || r.remaining === null) return Number.POSITIVE_INFINITY;
  return r.limit > 0 ? r.remaining / r.limit : 0;
}

/**
 * The window that binds first. Of one period, the one with the smaller share left (Anthropic's
 * input and output windows); of different periods, the one with less left (Mistral's minute
 * against its month: a month's larger share says nothing of the next minute).
 */
function tighter(a: QuotaReading | null, b: QuotaReading | null): QuotaReading | null {
  if (!a || !b) return a ?? b;
  if ((a.periodMs ?? MINUTE_MS) !== (b.periodMs ?? MINUTE_MS)) return (b.remaining ?? Infinity) < (a.remaining ?? Infinity) ? b : a;
  return share(b) < share(a) ? b : a;
}

type SfItem = { name: string; params: Map<string, string> };

/** Minimal RFC 8941 list of `"name";k=v;k=v` items: enough for the IETF RateLimit fields. */
function sfList(v: string | null): SfItem[] {
  if (!v) return [];
  return v.split(",").map((item) => {
    const [name = "", ...params] = item.split(";").map((s) => s.trim());
    const pairs = params.map((p): [string, string] => {
      const i = p.indexOf("=");
      return i < 0 ? [p, "?1"] : [p.slice(0, i).trim(), p.slice(i + 1).trim()];
    });
    return { name: name.replace(/^"|"$/g, ""), params: new Map(pairs) };
  });
}

/** `RateLimit: "default";r=50;t=30` + `RateLimit-Policy: "default";q=100;w=60`; tightest policy wins, its `w` its period. */
function structured(h: Headers, now: number): QuotaReading | null {
  const states = sfList(h.get("ratelimit"));
  const policies = sfList(h.get("ratelimit-policy"));
  let best: QuotaReading | null = null;
  for (const { name } of states.length ? states : policies) {
    const state = states.find((s) => s.name === name)?.params;
    const policy = policies.find((p) => p.name === name)?.params;
    const t = decimal(state?.get("t"));
    const untilReset = t === null ? null : wait(t * 1000);
    const w = decimal(policy?.get("w"));
    const r = nullIfEmpty({ limit: decimal(policy?.get("q")), remaining: decimal(state?.get("r")), resetAt: untilReset === null ? null : now + untilReset });
    best = tighter(best, r && { ...r, periodMs: w !== null && w > 0 && w * 1000 <= MAX_WAIT_MS * 31 ? w * 1000 : MINUTE_MS });
  }
  return best;
}

/** The first group the answer reports, its tightest window. */
function firstGroup(h: Headers, now: number, groups: readonly WindowGroup[]): QuotaReading | null {
  for (const g of groups) {
    const r = g === "ietf" ? structured(h, now) : g.reduce<QuotaReading | null>((best, w) => tighter(best, window(h, now, w)), null);
    if (r) return r;
  }
  return null;
}

/** The first valid hint among the row's headers: an invalid one falls through to the next. */
function headerHint(h: Headers, now: number, hints: readonly HintSpec[]): number | null {
  for (const { header, unit } of hints) {
    const v = h.get(header);
    if (v === null) continue;
    const ms = unit === "ms" ? (decimal(v) === null ? null : wait(decimal(v)!)) : parseRetryAfter(v, now);
    if (ms !== null) return ms;
  }
  return null;
}

/** Period a quota id names ("...PerMinute...", "...PerDay...": Google's), or null. */
function quotaIdPeriod(id: string): number | null {
  if (/perday/i.test(id)) return DAY_MS;
  if (/perminute/i.test(id)) return MINUTE_MS;
  if (/persecond/i.test(id)) return SECOND_MS;
  return null;
}

/** The window a quota's name or a refusal's words speak for: generated tokens alone, tokens, else requests. */
const kindNamed = (words: string): RefusedLimit["kind"] => (/output[\s_-]?tokens?/i.test(words) ? "output" : /token/i.test(words) ? "tokens" : "requests");

/** A `QuotaFailure` (Gemini's): the first violation's kind, period and limit (`quotaValue`, where sent). A per-day one is spent, read by the classifier. */
function quotaFailure(err: Obj | null, fallbackMs: number): RefusedLimit | null {
  for (const d of errorDetails(err)) {
    if (!Array.isArray(d.violations)) continue;
    const vs = d.violations.filter(isObj);
    // The shortest window is the one a pace can keep under; a day's refusal is the classifier's.
    const v = vs.find((x) => quotaIdPeriod(text(x.quotaId)) !== DAY_MS) ?? vs[0];
    if (!v) continue;
    const id = `${text(v.quotaId)} ${text(v.quotaMetric)}`;
    return { kind: kindNamed(id), periodMs: quotaIdPeriod(text(v.quotaId)) ?? fallbackMs, limit: decimal(v.quotaValue) ?? null };
  }
  return null;
}

/**
 * A refusal whose message alone names the quota it hit (Vertex's "Quota exceeded for
 * aiplatform.googleapis.com/online_prediction_output_tokens_per_minute_per_base_model ...", Bedrock's
 * "Too many tokens, please wait ..."): its kind, over the row's refusal period, limit unknown.
 * Vertex's error sits in `error`, Bedrock's body is `{message}` (`Message` in some services).
 */
function quotaWords(body: unknown, err: Obj | null, periodMs: number): RefusedLimit | null {
  const words = text(err?.message) || (isObj(body) ? text(body.message) || text(body.Message) : "");
  return words ? { kind: kindNamed(words), periodMs, limit: null } : null;
}

/** `error.metadata.headers` (OpenRouter's: X-RateLimit-Limit/Remaining/Reset, reset in epoch ms): a reading, a cap when its reset is hours away. */
function metadataHeaders(err: Obj | null, now: number): QuotaReading | null {
  const meta = isObj(err?.metadata) ? err.metadata : null;
  const hs = isObj(meta?.headers) ? meta.headers : null;
  if (!hs) return null;
  const pick = (name: string) => text(Object.entries(hs).find(([k]) => k.toLowerCase() === name)?.[1]);
  const r = nullIfEmpty({ limit: decimal(pick("x-ratelimit-limit")), remaining: decimal(pick("x-ratelimit-remaining")), resetAt: resetAt("epoch-ms", pick("x-ratelimit-reset"), now) });
  if (!r) return null;
  const far = r.resetAt !== null && r.resetAt - now >= CAP_HORIZON_MS;
  return { ...r, periodMs: far ? DAY_MS : MINUTE_MS, ...(far && { cap: true }) };
}

/** "Please try again in 7.66s." in a message (Groq's): a wait, nothing more. */
function tryAgainIn(err: Obj | null): number | null {
  const m = /Please try again in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)\./.exec(text(err?.message));
  return m ? parseDuration(m[1]!) : null;
}

/** Hints and readings a refusal's body holds, read by the shapes the row names (`limits.body`). */
function fromBody(d: Dialect, body: unknown, now: number): { hint: number | null; requests: QuotaReading | null; refused: RefusedLimit | null } {
  const err = errorObject(body);
  let hint: number | null = null;
  let requests: QuotaReading | null = null;
  let refused: RefusedLimit | null = null;
  for (const b of d.limits.body ?? []) {
    if (b === "error-details") {
      hint ??= parseRetryInfo(body);
      refused ??= quotaFailure(err, d.limits.refusalPeriodMs ?? MINUTE_MS);
    } else if (b === "quota-words") {
      refused ??= quotaWords(body, err, d.limits.refusalPeriodMs ?? MINUTE_MS);
    } else if (b === "metadata-headers") {
      requests ??= metadataHeaders(err, now);
      if (requests?.remaining === 0 && requests.resetAt !== null) hint ??= wait(Math.max(0, requests.resetAt - now));
    } else hint ??= tryAgainIn(err);
  }
  return { hint, requests, refused };
}

/**
 * Everything an answer says about rate limits, read as dialect `d` speaks. `body` only for an
 * error answer: its hints come after every header's, and, for a dialect that tells no window in
 * headers, the limit it hit (`refused`).
 */
export function parseRateLimitHeaders(h: Headers, now: number, d: Dialect, body?: unknown): RateLimitInfo {
  try {
    const info: RateLimitInfo = {
      retryAfterMs: headerHint(h, now, d.limits.hints ?? [RETRY_AFTER]),
      requests: firstGroup(h, now, d.limits.requests),
      tokens: firstGroup(h, now, d.limits.tokens),
      ...(d.limits.output && { output: firstGroup(h, now, d.limits.output) }),
    };
    if (body === undefined) return info;
    const b = fromBody(d, body, now);
    info.retryAfterMs ??= b.hint;
    info.requests ??= b.requests;
    // A provider that tells windows in headers is learned from them; one that tells none, from its refusals.
    const tellsNone = d.limits.requests.length === 0 && d.limits.tokens.length === 0;
    if (tellsNone && !info.requests && !info.tokens) info.refused = b.refused ?? { kind: "requests", periodMs: d.limits.refusalPeriodMs ?? MINUTE_MS, limit: null };
    return info;
  } catch {
    return { retryAfterMs: null, requests: null, tokens: null };
  }
}
