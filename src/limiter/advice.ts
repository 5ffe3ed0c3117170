// What the limiter tells a caller besides yes or no: when to come back, and how fast the key goes.
import type { MemberView, Pacing } from "./types";

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

export interface Headroom {
  /** Until the send gate or the quota opens for one more request (Infinity: not before a new reading). */
  openInMs: number;
  /** Slots free under the limit now, and waiters in line. */
  free: number;
  queued: number;
  limit: number;
  /** Mean latency of answers so far; null before the first. */
  avgLatencyMs: number | null;
  ratePerMs: number | null;
}

/**
 * A pool member as the Worker's router sees it: how long one more request would wait here (the
 * line drains at the limit per mean latency, or at the quota's pace where that is slower), and the
 * pace its quota allows, which weighs it against the other members. Without a known quota the
 * members weigh the same: a fast answer says nothing of how many the provider would take.
 */
export function memberView(h: Headroom): MemberView {
  let perMs = h.avgLatencyMs ? Math.max(1, h.limit) / h.avgLatencyMs : null;
  if (h.ratePerMs !== null) perMs = perMs === null ? h.ratePerMs : Math.min(perMs, h.ratePerMs);
  const ahead = h.queued + 1 - Math.max(0, h.free);
  const queueMs = ahead > 0 && perMs ? ahead / perMs : 0;
  const open = Number.isFinite(h.openInMs) ? Math.max(0, h.openInMs) : 60_000;
  const v: MemberView = { waitMs: Math.round(Math.max(open, queueMs)) };
  if (h.ratePerMs !== null) v.perMin = Math.round(h.ratePerMs * 60_000 * 10) / 10;
  return v;
}
