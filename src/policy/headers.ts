/**
 * Parsers for what providers send about rate limits. Pure and total: every input gives a number or
 * null, never an exception, because a stray header must not break a request that already succeeded.
 */

/** A wait beyond a day means a wrong unit or a broken clock, never a real plan to sleep. */
export const MAX_WAIT_MS = 24 * 60 * 60 * 1000;

const UNIT_MS: Record<string, number> = {
  h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ns: 1e-6,
};
// "ms" before "m", or "20ms" would read as 20 minutes and a stray "s".
const DURATION_PART = /(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|μs|ms|h|m|s)/y;
const DECIMAL = /^\d+(?:\.\d+)?$/;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const text = (v: unknown): string => (typeof v === "string" ? v : "");
/** A wait in ms if it is one: finite, not negative, at most MAX_WAIT_MS. */
export const wait = (ms: number): number | null => (Number.isFinite(ms) && ms >= 0 && ms <= MAX_WAIT_MS ? ms : null);

/** A plain non-negative decimal ("2", "1.5"). No sign, exponent or "Infinity": those are not what providers send. */
export function decimal(v: unknown): number | null {
  const t = text(v).trim();
  if (t.length > 32 || !DECIMAL.test(t)) return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}

/** Go-style duration as OpenAI and Groq send it ("6m0s", "20ms", "1m30.5s", "0.5m") → ms. */
export function parseDuration(v: string): number | null {
  const t = text(v).trim();
  if (t === "" || t.length > 64) return null;
  const re = new RegExp(DURATION_PART); // own lastIndex per call
  let total = 0;
  while (re.lastIndex < t.length) {
    const m = re.exec(t);
    if (!m) return null;
    total += Number(m[1]) * (UNIT_MS[m[2] ?? ""] ?? NaN);
  }
  // Sub-ms units and decimal fractions leave float noise (1.1s → 1100.0000000000002); keep µs precision.
  return wait(Math.round(total * 1000) / 1000);
}

/** UTC epoch ms from calendar parts, or null when a part is out of range (no silent Feb 30 → Mar 2). */
function utc(y: number, mon: number, d: number, h: number, mi: number, s: number): number | null {
  if (mon < 1 || mon > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  const t = Date.UTC(y, mon - 1, d, h, mi, Math.min(s, 59)); // a leap second folds into :59
  return new Date(t).getUTCDate() === d ? t : null;
}

const IMF_DATE = /^[a-z]{3}, (\d{1,2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) (?:gmt|utc)$/i;
const RFC850_DATE = /^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) gmt$/i;
const ASCTIME_DATE = /^[a-z]{3} ([a-z]{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/i;

/** The three HTTP-date forms of RFC 9110, parsed by hand because Date.parse reads asctime as local time. */
function parseHttpDate(v: string): number | null {
  const t = v.trim();
  const m = IMF_DATE.exec(t) ?? RFC850_DATE.exec(t);
  const a = ASCTIME_DATE.exec(t);
  // Every form reordered to [day, month, year, hour, minute, second].
  const p = m ? m.slice(1) : a ? [a[2], a[1], a[6], a[3], a[4], a[5]] : null;
  if (!p) return null;
  const [day, mon, year, h, mi, s] = p.map((x) => text(x));
  let y = Number(year);
  if (y < 100) y += y < 70 ? 2000 : 1900; // RFC 850 two-digit years
  const month = MONTHS.indexOf(text(mon).toLowerCase()) + 1;
  return utc(y, month, Number(day), Number(h), Number(mi), Number(s));
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[t ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:(z)|([+-])(\d{2}):?(\d{2}))$/i;

/** RFC 3339 timestamp ("2026-11-22T08:05:09Z", fractions and offsets allowed) → epoch ms. */
export function parseTimestamp(v: string): number | null {
  const m = RFC3339.exec(v.trim());
  if (!m) return null;
  const [y, mon, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const base = utc(y, mon, d, h, mi, s);
  const offH = Number(m[10] ?? 0), offM = Number(m[11] ?? 0);
  if (base === null || offH > 23 || offM > 59) return null;
  const offset = (m[9] === "-" ? -1 : 1) * (offH * 60 + offM) * 60_000;
  return base + Math.floor(Number(`0${m[7] ?? ""}`) * 1000) - offset;
}

/** `retry-after`: delta seconds or an HTTP-date → ms to wait. A date already past means "now" (clock skew). */
export function parseRetryAfter(v: string, now: number): number | null {
  const secs = decimal(v);
  if (secs !== null) return wait(secs * 1000);
  const at = parseHttpDate(text(v));
  return at === null ? null : wait(Math.max(0, at - now));
}

/**
 * A reset header → absolute epoch ms. Numbers are delta seconds unless too big to be one (epoch
 * seconds above 1e9, epoch ms above 1e12). Resets more than a day away on either side are garbage;
 * one slightly past is kept, since it truthfully says the window has already rolled over.
 */
export function parseReset(v: string, now: number): number | null {
  const n = decimal(v);
  let at: number | null;
  if (n !== null) at = n > 1e12 ? n : n > 1e9 ? n * 1000 : now + n * 1000;
  else {
    const d = parseDuration(v);
    at = d !== null ? now + d : (parseTimestamp(text(v)) ?? parseHttpDate(text(v)));
  }
  return at !== null && Math.abs(at - now) <= MAX_WAIT_MS ? at : null;
}

function parseJson(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** The `error` object of an error body: parsed JSON, raw JSON text, or Gemini's array wrapping it. */
export function errorObject(body: unknown): Obj | null {
  let b = typeof body === "string" ? parseJson(body) : body;
  if (Array.isArray(b)) b = b.find((x) => isObj(x) && isObj(x.error));
  return isObj(b) && isObj(b.error) ? b.error : null;
}

/** An error's `details` entries, in Google's error model (google.rpc.Status: RetryInfo, QuotaFailure, ErrorInfo, Help, ...). */
export function errorDetails(err: Obj | null): Obj[] {
  return Array.isArray(err?.details) ? err.details.filter(isObj) : [];
}

/** `RetryInfo.retryDelay` ("30s", or proto {seconds, nanos}) from an error body in Google's error model → ms. */
export function parseRetryInfo(body: unknown): number | null {
  try {
    for (const d of errorDetails(errorObject(body))) {
      const rd = d.retryDelay;
      const ms = isObj(rd)
        ? wait(Number(rd.seconds ?? 0) * 1000 + Number(rd.nanos ?? 0) / 1e6)
        : parseDuration(text(rd));
      if (ms !== null) return ms;
    }
  } catch {
    // A getter on an odd body must not turn a parse into a crash.
  }
  return null;
}
