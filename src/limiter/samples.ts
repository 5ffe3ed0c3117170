import type { OutcomeClass } from "../policy/types";
import { percentile } from "./metrics";

/**
 * The last 15 minutes of one limiter, in 5-second buckets, for the dashboard's time series. Pure:
 * every call takes the time. Bounded: at most SLOTS buckets, and per open bucket at most
 * LATENCY_KEEP latencies (a closed bucket keeps only its p50 and p99). Levels (in flight, queued,
 * limit, the provider's rate) only change on events, each of which touches the ring, so a
 * bucket without events had the levels the previous one ended with: reading fills gaps exactly.
 */
export const STEP_MS = 5_000;
export const SLOTS = 180;
export const SPAN_MS = STEP_MS * SLOTS;
export const LATENCY_KEEP = 256;

export interface Levels {
  inFlight: number;
  queued: number;
  limit: number;
  /** Requests per second the provider's requests window allows, when it has reported one. */
  rate: number | null;
}

export interface Bucket extends Levels {
  /** Start of the bucket, a multiple of STEP_MS. */
  t: number;
  answers: number;
  attempts: number;
  rateLimited: number;
  transient: number;
  inFlightMax: number;
  queuedMax: number;
  /** Latencies (ms) of the open bucket; emptied when it closes. */
  lat: number[];
  /** Seen so far in the open bucket, for the bounded keep below. */
  seen: number;
  p50: number | null;
  p99: number | null;
}

export interface Ring {
  /** Oldest first; only buckets in which something happened. */
  buckets: Bucket[];
}

/** One point of a chart: per-second rates over the bucket, levels as they stood. */
export interface Point {
  t: number;
  answersPerSec: number;
  rateLimited: number;
  transient: number;
  inFlight: number;
  inFlightMax: number;
  limit: number;
  queued: number;
  rate: number | null;
  p50: number | null;
  p99: number | null;
}

export function emptyRing(): Ring {
  return { buckets: [] };
}

const start = (now: number) => Math.floor(now / STEP_MS) * STEP_MS;

function close(b: Bucket): void {
  if (b.lat.length > 0) {
    const sorted = [...b.lat].sort((x, y) => x - y);
    b.p50 = Math.round(percentile(sorted, 50));
    b.p99 = Math.round(percentile(sorted, 99));
  }
  b.lat = [];
}

function open(t: number, lv: Levels): Bucket {
  return { t, ...lv, answers: 0, attempts: 0, rateLimited: 0, transient: 0, inFlightMax: lv.inFlight, queuedMax: lv.queued, lat: [], seen: 0, p50: null, p99: null };
}

function prune(r: Ring, now: number): void {
  const oldest = start(now) - SPAN_MS + STEP_MS;
  let drop = 0;
  while (drop < r.buckets.length && r.buckets[drop]!.t < oldest) drop++;
  if (drop > 0) r.buckets.splice(0, drop);
  if (r.buckets.length > SLOTS) r.buckets.splice(0, r.buckets.length - SLOTS);
}

/** The bucket for `now` (a clock that went back lands in the newest bucket), levels updated. */
function current(r: Ring, now: number, lv: Levels): Bucket {
  const t = start(now);
  let b = r.buckets.at(-1);
  if (!b || t > b.t) {
    if (b) close(b);
    b = open(t, lv);
    r.buckets.push(b);
    prune(r, now);
  }
  b.inFlight = lv.inFlight;
  b.queued = lv.queued;
  b.limit = lv.limit;
  b.rate = lv.rate;
  b.inFlightMax = Math.max(b.inFlightMax, lv.inFlight);
  b.queuedMax = Math.max(b.queuedMax, lv.queued);
  return b;
}

/** Something changed the levels (a grant, a release, a queue change, an expiry). */
export function noteLevels(r: Ring, now: number, lv: Levels): void {
  current(r, now, lv);
}

/** An upstream attempt settled. */
export function noteAttempt(r: Ring, now: number, lv: Levels, a: { cls: OutcomeClass; latencyMs: number }): void {
  const b = current(r, now, lv);
  b.attempts += 1;
  if (a.cls === "success") b.answers += 1;
  else if (a.cls === "rate_limit") b.rateLimited += 1;
  else if (a.cls === "transient" || a.cls === "capacity") b.transient += 1;
  if (!Number.isFinite(a.latencyMs) || a.latencyMs < 0) return;
  // Past LATENCY_KEEP, each new latency overwrites the oldest: the bucket's last ones are kept.
  if (b.lat.length < LATENCY_KEEP) b.lat.push(a.latencyMs);
  else b.lat[b.seen % LATENCY_KEEP] = a.latencyMs;
  b.seen += 1;
}

function percentiles(b: Bucket): { p50: number | null; p99: number | null } {
  if (b.lat.length === 0) return { p50: b.p50, p99: b.p99 };
  const sorted = [...b.lat].sort((x, y) => x - y);
  return { p50: Math.round(percentile(sorted, 50)), p99: Math.round(percentile(sorted, 99)) };
}

/** Every bucket from the first known one (at most 15 minutes back) to now's, gaps filled. */
export function series(r: Ring, now: number): Point[] {
  const last = start(now);
  const first = Math.max(last - SPAN_MS + STEP_MS, r.buckets[0]?.t ?? Infinity);
  const out: Point[] = [];
  let i = 0;
  let prev: Bucket | null = null;
  for (let t = first; t <= last; t += STEP_MS) {
    while (i < r.buckets.length && r.buckets[i]!.t < t) prev = r.buckets[i++]!;
    const b = r.buckets[i]?.t === t ? r.buckets[i]! : null;
    if (b) {
      const { p50, p99 } = percentiles(b);
      out.push({ t, answersPerSec: (b.answers * 1_000) / STEP_MS, rateLimited: b.rateLimited, transient: b.transient, inFlight: b.inFlight,
        inFlightMax: b.inFlightMax, limit: b.limit, queued: b.queuedMax, rate: b.rate, p50, p99 });
    } else if (prev) {
      out.push({ t, answersPerSec: 0, rateLimited: 0, transient: 0, inFlight: prev.inFlight, inFlightMax: prev.inFlight, limit: prev.limit,
        queued: prev.queued, rate: prev.rate, p50: null, p99: null });
    }
  }
  return out;
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const orNull = (v: unknown) => (finite(v) ? v : null);

/** Reads a stored ring, keeping only well-formed buckets of the last 15 minutes, in order. */
export function restoreRing(saved: unknown, now: number): Ring {
  const list = (saved as { buckets?: unknown } | null)?.buckets;
  if (!Array.isArray(list)) return emptyRing();
  const buckets: Bucket[] = [];
  for (const raw of list as Partial<Bucket>[]) {
    if (!raw || !finite(raw.t) || raw.t % STEP_MS !== 0 || (buckets.length && raw.t <= buckets.at(-1)!.t)) continue;
    const lv: Levels = { inFlight: orNull(raw.inFlight) ?? 0, queued: orNull(raw.queued) ?? 0, limit: orNull(raw.limit) ?? 0, rate: orNull(raw.rate) };
    const b = open(raw.t, lv);
    for (const k of ["answers", "attempts", "rateLimited", "transient", "inFlightMax", "queuedMax", "seen"] as const) b[k] = orNull(raw[k]) ?? 0;
    b.lat = Array.isArray(raw.lat) ? raw.lat.filter(finite).slice(0, LATENCY_KEEP) : [];
    b.p50 = orNull(raw.p50);
    b.p99 = orNull(raw.p99);
    buckets.push(b);
  }
  const r = { buckets };
  prune(r, now);
  return r;
}
