// A key's quota windows and what they allow: the level now, when a request fits, a grant's charge,
// the pace. How a provider's reading sets a window is quota-reading.ts. Pure: time is passed in.

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
  /**
   * The most the bucket holds: `limit` for a bucket of a whole minute, less where a provider
   * enforces its per-minute limit over shorter periods (remaining + refill x time-to-full).
   */
  capacity: number | null;
  /** When the reading behind `remaining` was true; an older reading arriving late is not taken. */
  readAt?: number;
  /** The bucket's size as the last readings bound it (see quota-reading.ts, `bucketSize`): from below by admitted requests, from above by resets. */
  lows?: number[];
  highs?: number[];
  /** How long the limit is counted over (the dialect's period for it); a minute when absent. */
  periodMs?: number;
  /**
   * Where the window is known from: `headers` (the provider told remaining, and maybe limit and
   * reset), or `refusals` (a provider that tells nothing: learned from its 429s, learned.ts).
   */
  source?: "headers" | "refusals";
  /**
   * The size its operator states per minute (`PROVIDERS`' quota, stated.ts), on a window learned
   * from refusals: where it starts, and the most a probe raises it to.
   */
  stated?: number;
  /**
   * On a window learned from refusals, the refusal that set it last: when, and its grant's number.
   * A refusal of a grant made before then is of the same burst (learned.ts).
   */
  learned?: { at: number; n: number };
  /** A window told without limit and reset: its refill as observed between readings (units per ms). */
  learnedPerMs?: number;
  /** The provider refuses outright one request above `limit` (its dialect's window says so; too-large.ts). */
  refusesLarger?: boolean;
  /**
   * A reading a refill is measured from (its date, remaining and the grant count it was true at):
   * kept until a later reading is far enough from it to say something, then replaced by that one.
   */
  ref?: { at: number; remaining: number; granted: number };
}

/** Running totals of what this limiter has granted, to tell which grants a reading already counts. */
export interface Granted {
  requests: number;
  tokens: number;
  /** Output allowances (what a window of generated tokens is charged); absent in a state from before it: 0. */
  output?: number;
}

/** One grant: when, its cost, and `granted.requests` just after it (which numbers it). */
export interface GrantEntry {
  at: number;
  n: number;
  cost: number;
  /** Its output allowance, where it named one. */
  out?: number;
}

export interface QuotaState {
  requests: QuotaWindow | null;
  tokens: QuotaWindow | null;
  /** Generated tokens alone, where the provider limits them apart (Fireworks', Anthropic's OTPM): charged with output allowances. */
  output?: QuotaWindow | null;
  granted: Granted;
  /** The latest grants, in order (in memory only): a late reading replays those made after it. */
  recent?: GrantEntry[];
  /** Numbers of grants the provider refused on a key paced from its refusals (learned.ts). */
  refusedN?: number[];
}

/** Grants remembered for replay (at least; up to twice this between trims): more than are ever made on one key between a send and its answer. */
const RECENT_GRANTS = 512;

/** Per-minute limits are the norm: a reading without its dialect's period is taken as one. */
export const DEFAULT_WINDOW_MS = 60_000;
/**
 * The longest any reading may make a request wait: a window is never empty past this (a month's
 * cap read as a pace would otherwise hold a key for weeks). A spent cap is the classifier's, not a wait.
 */
export const MAX_QUOTA_WAIT_MS = 24 * 60 * 60 * 1000;

export function emptyQuota(): QuotaState {
  return { requests: null, tokens: null, output: null, granted: { requests: 0, tokens: 0, output: 0 } };
}

/** What the window holds now: its last level plus the refill since, never above the limit. */
export function available(w: QuotaWindow, now: number): number {
  const r = w.remaining + w.refillPerMs * Math.max(0, now - w.observedAt);
  const top = w.capacity ?? w.limit;
  return top === null ? r : Math.min(top, r);
}

/** When `need` units will be there, or `now` if they already are. Infinity if it never refills. */
function readyAt(w: QuotaWindow, need: number, now: number, behind: boolean, marginMs: number): number {
  // A request larger than the whole window goes when the window is full, or it would never go;
  // unless it is `behind` claims that must go first: then it waits for them.
  const top = w.capacity ?? w.limit;
  if (behind && top !== null && need > top) return Number.POSITIVE_INFINITY;
  const padded = need + w.refillPerMs * marginMs;
  const want = top !== null ? Math.min(padded, top) : padded;
  const short = want - available(w, now);
  if (short <= 0) return now;
  // Every window refills (quota-reading.ts never leaves a rate of 0, and a window restored from before
  // it did gets one unit a period): no reading makes a key wait forever, nor past MAX_QUOTA_WAIT_MS.
  const rate = w.refillPerMs > 0 ? w.refillPerMs : 1 / (w.periodMs ?? DEFAULT_WINDOW_MS);
  return now + Math.min(Math.ceil(short / rate), MAX_QUOTA_WAIT_MS);
}

/**
 * The earliest time `requests` requests of `cost` tokens in all (and `out` of output allowance)
 * fit every window (`now` when they fit already). `behind`: the last of them waits behind the
 * others, so never goes ahead of them. `marginMs`: wait for that much more refill than they need
 * (at most a full window).
 */
export function fitsAt(q: QuotaState, cost: number, now: number, requests = 1, behind = false, marginMs = 0, out = 0): number {
  let at = now;
  if (q.requests) at = Math.max(at, readyAt(q.requests, requests, now, behind, marginMs));
  if (q.tokens) at = Math.max(at, readyAt(q.tokens, cost, now, behind, marginMs));
  // A request that names no output allowance draws nothing from it, not even its margin.
  if (q.output && out > 0) at = Math.max(at, readyAt(q.output, out, now, behind, marginMs));
  return at;
}

/** A grant draws from the buckets now (`out`: its output allowance); a level may go below zero (a request larger than the window). */
export function charge(q: QuotaState, cost: number, now: number, out = 0): void {
  q.granted.requests += 1;
  q.granted.tokens += cost;
  q.granted.output = (q.granted.output ?? 0) + out;
  q.recent ??= [];
  q.recent.push(out > 0 ? { at: now, n: q.granted.requests, cost, out } : { at: now, n: q.granted.requests, cost });
  // Trimmed in halves, not per grant: a grant never shifts the whole log.
  if (q.recent.length > 2 * RECENT_GRANTS) q.recent = q.recent.slice(-RECENT_GRANTS);
  for (const [w, units] of [[q.requests, 1], [q.tokens, cost], [q.output, out]] as const) {
    if (!w) continue;
    w.remaining = available(w, now) - units;
    w.observedAt = now;
  }
}

/**
 * A provider that draws a request's reservation (its prompt and output limit) when it starts and
 * gives back what its answer did not use when it ends (Bedrock): grant `n` (its lease's
 * `mark.requests`) drew `drawn` tokens in the end, and what it was charged above that goes back to
 * a tokens window learned from refusals or stated (one the provider's headers tell is theirs: the
 * next reading says it). The grant is counted at what it drew from then on, as a refusal reads the
 * log (learned.ts), on a key with no tokens window yet too. A grant the log no longer holds gives
 * nothing back. True when the window changed.
 */
export function giveBack(q: QuotaState, n: number, drawn: number, now: number): boolean {
  const w = q.tokens;
  if ((w && w.source !== "refusals") || !(drawn >= 0)) return false;
  const e = q.recent?.findLast((g) => g.n === n);
  const units = e ? e.cost - drawn : 0;
  if (!e || !(units > 0)) return false;
  e.cost = drawn;
  // No window yet: the grant is counted at what it drew when a refusal teaches one (learned.ts).
  if (!w) return false;
  const top = w.capacity ?? w.limit;
  w.remaining = top === null ? available(w, now) + units : Math.min(top, available(w, now) + units);
  w.observedAt = now;
  return true;
}

/**
 * What the windows say about a request of `cost` now: `unknown` when no window was ever reported,
 * `empty` when one cannot pay for it, else `room`. A 429 with room is about concurrency.
 */
export function room(q: QuotaState, cost: number, now: number, out = 0): "room" | "empty" | "unknown" {
  if (!q.requests && !q.tokens && !q.output) return "unknown";
  return fitsAt(q, cost, now, 1, false, 0, out) > now ? "empty" : "room";
}

/** True when some window cannot pay now for `requests` requests of `tokens` tokens in all (and `out` of output). */
export function tight(q: QuotaState, requests: number, tokens: number, now: number, out = 0): boolean {
  return (q.requests !== null && available(q.requests, now) < requests) || (q.tokens !== null && available(q.tokens, now) < tokens) ||
    (!!q.output && available(q.output, now) < out);
}

/** Requests per ms the windows allow at a mean cost of `cost` tokens (and `out` of output); null when none is known. */
export function paceRate(q: QuotaState, cost: number, out = 0): number | null {
  const rates: number[] = [];
  if (q.requests && q.requests.refillPerMs > 0) rates.push(q.requests.refillPerMs);
  if (q.tokens && q.tokens.refillPerMs > 0 && cost > 0) rates.push(q.tokens.refillPerMs / cost);
  if (q.output && q.output.refillPerMs > 0 && out > 0) rates.push(q.output.refillPerMs / out);
  return rates.length ? Math.min(...rates) : null;
}

/** The contract's view: remaining as predicted now, resetAt when the window will be full again, and the quota `PROVIDERS` states for it, if any. */
export function describe(w: QuotaWindow | null, now: number): { limit: number | null; remaining: number; resetAt: string | null; stated?: number } | null {
  if (!w) return null;
  const left = Math.max(0, Math.floor(available(w, now)));
  let resetAt: string | null = null;
  const top = w.capacity ?? w.limit;
  if (top !== null && w.refillPerMs > 0) resetAt = new Date(now + Math.ceil(Math.max(0, top - available(w, now)) / w.refillPerMs)).toISOString();
  return { limit: w.limit, remaining: left, resetAt, ...(w.stated !== undefined && { stated: w.stated }) };
}
