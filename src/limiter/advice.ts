// What the limiter tells a caller besides yes or no: when to come back, and how fast the key goes.
import type { Pacing } from "./types";

/** The hints for a caller's own scheduler; the rate in requests per minute, whole from 10 up, two significant digits below. */
export function pacingOf(limit: number, ratePerMs: number | null): Pacing {
  if (ratePerMs === null) return { limit };
  const perMin = ratePerMs * 60_000;
  return { limit, ratePerMin: perMin >= 10 ? Math.round(perMin) : Number(perMin.toPrecision(2)) };
}

export interface Standing {
  /** Until the send gate or the caller's quota opens (Infinity: not before a new reading). */
  openInMs: number;
  /** The caller's own waiters in its line, and its least share of the key's grants (queue.standing). */
  ahead: number;
  share: number;
  limit: number;
  avgLatencyMs: number;
  /** The quota's pace in requests per ms, or null when no quota is known. */
  ratePerMs: number | null;
}

/**
 * How long a refused caller should wait before trying again: until the gate or quota opens, and
 * until its own line would have drained at its own share of the key (the limit per mean latency,
 * or the quota's pace where that is slower), not the whole queue's length. At least 1 s.
 */
export function comeBackAfter(s: Standing): number {
  let queued = Math.ceil(s.ahead / (Math.max(1, s.limit) * s.share)) * s.avgLatencyMs;
  if (s.ratePerMs !== null) queued = Math.max(queued, s.ahead / (s.ratePerMs * s.share));
  return Math.max(1_000, Math.ceil(Number.isFinite(s.openInMs) ? Math.max(s.openInMs, queued) : queued));
}
