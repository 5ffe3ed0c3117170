import type { QuotaReading, RateLimitInfo } from "../policy/types";

/**
 * One provider window, modelled as a token bucket (OpenAI and Anthropic both refill continuously
 * and report `reset` as the time until the bucket is full). `remaining` is the level at
 * `observedAt`: set from the provider's reading, then lowered by each grant this limiter makes
 * before the next reading, and refilled with time in between.
 */
export interface QuotaWindow {
  limit: number | null;
  remaining: number;
  observedAt: number;
  /** Units per ms; derived from (limit - remaining) / (reset - observed). */
  refillPerMs: number;
}

/** Running totals of what this limiter has granted, to tell which grants a reading already counts. */
export interface Granted {
  requests: number;
  tokens: number;
}

export interface QuotaState {
  requests: QuotaWindow | null;
  tokens: QuotaWindow | null;
  granted: Granted;
}

/** Per-minute limits are the norm; this rate is assumed until a reading implies another. */
const DEFAULT_WINDOW_MS = 60_000;
export const LOW_WATER = 0.1;

export function emptyQuota(): QuotaState {
  return { requests: null, tokens: null, granted: { requests: 0, tokens: 0 } };
}

function fromReading(r: QuotaReading | null, prev: QuotaWindow | null, now: number, since: number): QuotaWindow | null {
  if (!r || r.remaining === null) return prev;
  const limit = r.limit ?? prev?.limit ?? null;
  // Never below empty: a provider refuses what does not fit rather than going into debt, so
  // grants beyond what a reading left will come back as 429s, not as a deeper hole.
  const remaining = Math.max(0, (limit === null ? r.remaining : Math.min(r.remaining, limit)) - since);
  const perMinute = limit !== null ? limit / DEFAULT_WINDOW_MS : 0;
  let refillPerMs = prev?.refillPerMs ?? perMinute;
  // Never faster than the limit per minute: a provider that enforces its RPM in short slices
  // (a bucket smaller than the limit) reports a near reset that would otherwise read as a flood.
  if (limit !== null && r.resetAt !== null && r.resetAt > now && limit > remaining)
    refillPerMs = Math.min((limit - remaining) / (r.resetAt - now), perMinute);
  return { limit, remaining, observedAt: now, refillPerMs };
}

/**
 * Replaces each window the response reported; windows it did not mention keep their prediction.
 * `mark` is `granted` as it stood just after the reporting request was granted: whatever was
 * granted after it is on its way and not yet in the provider's count, so it is taken off the
 * reading. Without a mark (a lease this object no longer knows) the reading is taken as is.
 */
export function observe(q: QuotaState, info: RateLimitInfo, now: number, mark?: Granted): void {
  const since = (key: keyof Granted) => (mark ? Math.max(0, q.granted[key] - mark[key]) : 0);
  q.requests = fromReading(info.requests, q.requests, now, since("requests"));
  q.tokens = fromReading(info.tokens, q.tokens, now, since("tokens"));
}

/** What the window holds now: its last level plus the refill since, never above the limit. */
export function available(w: QuotaWindow, now: number): number {
  const r = w.remaining + w.refillPerMs * Math.max(0, now - w.observedAt);
  return w.limit === null ? r : Math.min(w.limit, r);
}

/** When `need` units will be there, or `now` if they already are. Infinity if it never refills. */
function readyAt(w: QuotaWindow, need: number, now: number): number {
  // A request larger than the whole window goes when the window is full, or it would never go.
  const want = w.limit !== null ? Math.min(need, w.limit) : need;
  const short = want - available(w, now);
  if (short <= 0) return now;
  if (w.refillPerMs <= 0) return Number.POSITIVE_INFINITY;
  return now + Math.ceil(short / w.refillPerMs);
}

/** The earliest time a request of `cost` tokens fits both windows (`now` when it fits already). */
export function fitsAt(q: QuotaState, cost: number, now: number): number {
  let at = now;
  if (q.requests) at = Math.max(at, readyAt(q.requests, 1, now));
  if (q.tokens) at = Math.max(at, readyAt(q.tokens, cost, now));
  return at;
}

/** A grant draws from the bucket now; the level may go below zero (a request larger than the window). */
export function charge(q: QuotaState, cost: number, now: number): void {
  q.granted.requests += 1;
  q.granted.tokens += cost;
  for (const [w, units] of [[q.requests, 1], [q.tokens, cost]] as const) {
    if (!w) continue;
    w.remaining = available(w, now) - units;
    w.observedAt = now;
  }
}

/** True when a reported window has less than 10% left: time to trim concurrency before a 429. */
export function lowWater(q: QuotaState, now: number): boolean {
  return [q.requests, q.tokens].some(
    (w) => w !== null && w.limit !== null && w.limit > 0 && available(w, now) < w.limit * LOW_WATER,
  );
}

/** The contract's view: remaining as predicted now, resetAt when the window will be full again. */
export function describe(w: QuotaWindow | null, now: number): { limit: number | null; remaining: number; resetAt: string | null } | null {
  if (!w) return null;
  const left = Math.max(0, Math.floor(available(w, now)));
  let resetAt: string | null = null;
  if (w.limit !== null && w.refillPerMs > 0) resetAt = new Date(now + Math.ceil(Math.max(0, w.limit - available(w, now)) / w.refillPerMs)).toISOString();
  return { limit: w.limit, remaining: left, resetAt };
}
