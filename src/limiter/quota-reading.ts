// How a provider's reading sets a quota window (quota.ts holds the windows and what they allow):
// the level the reading tells, less the grants it cannot have counted yet; the refill its reset
// implies (or, told without one, learned between readings); and the bucket's size the readings
// bound. Also what a 429's own reading says of the request it refused. Pure: time is passed in.
import type { QuotaReading, RateLimitInfo } from "../policy/types";
import { DEFAULT_WINDOW_MS, type Granted, type GrantEntry, type QuotaState, type QuotaWindow } from "./quota";

/** A refill learned from readings is never faster than the whole bucket each second (Azure enforces per second at the finest). */
const FASTEST_REFILL_MS = 1_000;
/** How far one measured recovery moves a learned refill (the rest is what it was). */
const LEARN_WEIGHT = 0.3;
/** Readings closer than this say too little about a refill to learn from. */
const MIN_LEARN_SPAN_MS = 200;

/** Readings kept to bound a bucket's size: enough to see past one reset's rounding, few enough to follow a change. */
const BOUND_READINGS = 8;

const keep = (xs: number[] | undefined, x: number) => [...(xs ?? []), x].slice(-BOUND_READINGS);

/**
 * The bucket's size from the last readings. An admitted request's reading plus what it took was
 * in the bucket, so the size is at least that, and exactly that when the request found it full:
 * this conservative bound is the size, since a bucket taken for larger than it is lets two
 * requests go where one fits (a smaller one only costs a burst the pace does not need). Before any
 * request was admitted, the resets bound it from above: a reading plus the refill until its reset,
 * loose by the reset's rounding (Anthropic's are whole seconds, rounded up).
 */
function bucketSize(w: Pick<QuotaWindow, "lows" | "highs">, limit: number | null): number | null {
  const size = w.lows?.length ? Math.max(...w.lows) : w.highs?.length ? Math.min(...w.highs) : null;
  return size === null ? limit : limit === null ? size : Math.min(limit, size);
}

/** The grants numbered after `n`: the log's tail, found from its end (a settle walks only those). */
function grantsAfter(recent: GrantEntry[] | undefined, n: number): GrantEntry[] {
  if (!recent) return [];
  let i = recent.length;
  while (i > 0 && recent[i - 1]!.n > n) i--;
  return recent.slice(i);
}

/** Grants made after a reading: their times and what each drew from this window, and how many in all. */
interface Owed {
  grants: { at: number; units: number }[];
  /** All units granted since, the log's and any it no longer holds. */
  total: number;
}

/**
 * A window told without limit and reset (Azure): its refill, from what the readings show. It is
 * at least its size per period (the row's period: it holds what it was seen to hold, refilled at
 * least once a period), and between a reference reading and one at least MIN_LEARN_SPAN_MS later
 * it recovered (remaining now) - (remaining then) + (grants counted between), which is the refill
 * when the bucket did not fill up meanwhile (a lower bound when it did: then the estimate only rises).
 */
function learnedRefill(prev: QuotaWindow | null, top: number, at: number, granted: number | null, size: number, periodMs: number): { rate: number; ref?: QuotaWindow["ref"] } {
  const floor = Math.max(1, size) / periodMs;
  let rate = Math.max(prev?.learnedPerMs ?? floor, floor);
  const here = granted === null ? undefined : { at, remaining: top, granted };
  const ref = prev?.ref;
  if (!ref || !here) return { rate, ref: ref ?? here };
  const span = at - ref.at;
  if (span < MIN_LEARN_SPAN_MS) return { rate, ref };
  const sample = (top - ref.remaining + (granted! - ref.granted)) / span;
  rate = top >= size - 0.5 ? Math.max(rate, sample) : rate + LEARN_WEIGHT * (sample - rate);
  return { rate: Math.min(Math.max(rate, floor), Math.max(1, size) / FASTEST_REFILL_MS), ref: here };
}

function fromReading(r: QuotaReading | null, prev: QuotaWindow | null, now: number, owed: Owed, at: number, took: number, granted: number | null): QuotaWindow | null {
  if (!r || r.remaining === null) return prev;
  // Answers overtake each other: a reading from before the one the level rests on says less.
  if (prev?.readAt !== undefined && at < prev.readAt && (r.limit === null || r.limit === prev.limit)) return prev;
  const periodMs = r.periodMs ?? prev?.periodMs ?? DEFAULT_WINDOW_MS;
  const limit = r.limit ?? (prev?.source === "refusals" ? null : prev?.limit) ?? null;
  // Grants made after the reading stay owed, below empty if need be: the reading is dated at
  // admission and the refill since then is counted, so they may have drawn on that refill. (The
  // ones the provider refuses come back as 429s whose own readings correct the level.) The debt
  // is bounded by one window, so a burst of refused grants cannot stall the key for long.
  const top = limit === null ? r.remaining : Math.min(r.remaining, limit);
  const perPeriod = limit !== null ? limit / periodMs : 0;
  // The rate from the time to reset as parsed (OpenAI's durations count from the answer, when they
  // were parsed); the bucket's bound from the reading's date (Anthropic's resets are moments).
  const toReset = r.resetAt === null ? null : r.resetAt - now;
  const sinceRead = r.resetAt === null ? null : r.resetAt - Math.min(at, now);
  let refillPerMs = prev && prev.source !== "refusals" && (prev.periodMs ?? DEFAULT_WINDOW_MS) === periodMs ? prev.refillPerMs : perPeriod;
  if (refillPerMs <= 0) refillPerMs = perPeriod;
  // Never faster than the limit per period: a provider that enforces its RPM in short slices
  // (a bucket smaller than the limit) reports a near reset that would otherwise read as a flood.
  if (limit !== null && toReset !== null && toReset > 0 && limit > top)
    refillPerMs = Math.min((limit - top) / toReset, perPeriod);
  const sameLimit = prev?.limit === limit && prev?.source !== "refusals";
  const lows = took > 0 ? keep(sameLimit ? prev?.lows : undefined, top + took) : sameLimit ? prev?.lows : undefined;
  const highs = limit !== null && toReset !== null && refillPerMs > 0
    ? keep(sameLimit ? prev?.highs : undefined, Math.max(1, top + refillPerMs * Math.max(0, sinceRead ?? 0)))
    : sameLimit ? prev?.highs : undefined;
  // A window told with no limit holds at least what it was seen to hold.
  const seen = limit === null ? Math.max(bucketSize({ lows, highs }, null) ?? 0, top, 1) : null;
  const capacity = seen ?? bucketSize({ lows, highs }, limit);
  let learnedPerMs: number | undefined;
  let ref: QuotaWindow["ref"];
  if (seen !== null) {
    // No limit and no reset: never a refill of 0 (the key would wait forever on a low reading).
    const learned = toReset !== null && toReset > 0 ? { rate: Math.max(1, seen - top) / toReset } : learnedRefill(prev, top, at, granted, seen, periodMs);
    learnedPerMs = learned.rate;
    ref = learned.ref;
    refillPerMs = learnedPerMs;
  }
  if (refillPerMs <= 0) refillPerMs = 1 / periodMs; // a limit of 0: one unit a period, never a lock
  // The level now: the reading, then each grant made since at its own time, the bucket refilling
  // in between and never above full (a grant taken off a full bucket is not counted twice, and
  // thirty grants during a 3 s answer do not all fall on its end). Grants the log no longer holds
  // come off at the reading's date: the model may lag, never lead.
  const read = Math.min(at, now);
  const full = capacity ?? Number.POSITIVE_INFINITY;
  let level = top - Math.max(0, owed.total - owed.grants.reduce((n, g) => n + g.units, 0));
  let t = read;
  for (const g of owed.grants) {
    if (g.at > t) [level, t] = [Math.min(full, level + refillPerMs * (g.at - t)), g.at];
    level -= g.units;
  }
  level = Math.min(full, level + refillPerMs * Math.max(0, now - t));
  const remaining = Math.max(-(limit ?? capacity ?? top), level);
  return {
    limit, remaining, observedAt: now, refillPerMs, capacity, readAt: at, lows, highs, periodMs, source: "headers",
    ...(learnedPerMs !== undefined && { learnedPerMs }),
    ...(r.refusesLarger && { refusesLarger: true }),
    ...(ref && { ref }),
  };
}

/** What a grant drew from each window. */
const UNITS: Record<keyof Granted, (e: GrantEntry) => number> = { requests: () => 1, tokens: (e) => e.cost, output: (e) => e.out ?? 0 };

/**
 * Replaces each window the response reported; windows it did not mention keep their prediction.
 * `mark` is `granted` as it stood just after the reporting request was granted: whatever was
 * granted after it is on its way and not yet in the provider's count, so it is taken off the
 * reading. Without a mark (a lease this object no longer knows) the reading is taken as is.
 * `at` is when the reading was true: the provider counts at admission, about when the request
 * was granted, not when its answer came back; the window has refilled since. `took` is what the
 * reporting request itself drew (nothing for a refusal): the level plus it bounds the bucket's size.
 */
export function observe(q: QuotaState, info: RateLimitInfo, now: number, mark?: Granted, at = now, took?: Granted): void {
  const after = mark ? grantsAfter(q.recent, mark.requests) : [];
  const owed = (key: keyof Granted): Owed => ({
    grants: after.map((e) => ({ at: e.at, units: UNITS[key](e) })),
    total: mark ? Math.max(0, (q.granted[key] ?? 0) - (mark[key] ?? 0)) : 0,
  });
  // The grant count the reading was true at: what a window told without limit learns its refill from.
  const readGranted = (key: keyof Granted) => (mark ? (mark[key] ?? 0) : null);
  q.requests = fromReading(info.requests, q.requests, now, owed("requests"), at, took?.requests ?? 0, readGranted("requests"));
  q.tokens = fromReading(info.tokens, q.tokens, now, owed("tokens"), at, took?.tokens ?? 0, readGranted("tokens"));
  if (info.output || q.output) q.output = fromReading(info.output ?? null, q.output ?? null, now, owed("output"), at, took?.output ?? 0, readGranted("output"));
}

/**
 * What a 429's own reading says, as it stood when the provider refused: `empty` when a reported
 * window could not pay for the request, `room` when every reported window could, null when it
 * reported none (then the model decides).
 */
export function roomInReading(info: RateLimitInfo, cost: number, out = 0): "room" | "empty" | null {
  const short = (r: QuotaReading | null | undefined, need: number) => !!r && r.remaining !== null && r.remaining < Math.min(need, r.limit ?? need);
  const reported = [info.requests, info.tokens, info.output].some((r) => !!r && r.remaining !== null);
  if (!reported) return null;
  return short(info.requests, 1) || short(info.tokens, cost) || short(info.output, out) ? "empty" : "room";
}
