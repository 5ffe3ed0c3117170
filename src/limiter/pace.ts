import { paceRate, type QuotaState } from "./quota";

/**
 * What a quota-bound key needs in flight: by Little's law, the rate its windows allow times how
 * long a slot is held. Both means are exponentially weighted, so they follow the present.
 */
export interface PaceState {
  /** Mean time a successful attempt holds its slot, grant to release (ms). */
  holdMs: number | null;
  /** Mean estimated token cost of a granted request. */
  cost: number | null;
  /** The mean output allowance (what a window of generated tokens is charged); absent until one was. */
  out?: number | null;
}

/** Slots beyond rate x hold: jitter in latency and in the quota's refill must not make the limit bind. */
export const PACE_MARGIN = 1.5;
const ALPHA = 0.1;

export function emptyPace(): PaceState {
  return { holdMs: null, cost: null };
}

const mean = (prev: number | null, x: number) => (prev === null ? x : prev + ALPHA * (x - prev));

export function noteCost(p: PaceState, cost: number, out = 0): void {
  if (!Number.isFinite(cost) || cost < 0) return;
  p.cost = mean(p.cost, cost);
  if (out > 0 || p.out != null) p.out = mean(p.out ?? null, Number.isFinite(out) && out > 0 ? out : 0);
}

/** A slot's hold time; `first` marks a first guess (the answer's latency) made before any release. */
export function noteHold(p: PaceState, ms: number, first = false): void {
  if (!Number.isFinite(ms) || ms < 0) return;
  if (first) p.holdMs ??= ms;
  else p.holdMs = mean(p.holdMs, ms);
}

/**
 * Slots the windows' pace needs in flight, or null while the rate is unknown. Before any slot was
 * released, `heldMs` (how long the oldest slot has been held) stands in for the hold time: it
 * is a lower bound that grows until the first answer.
 */
export function paceNeed(p: PaceState, q: QuotaState, heldMs = 0, margin = PACE_MARGIN): number | null {
  const rate = paceRate(q, p.cost ?? 1, p.out ?? 0);
  const hold = p.holdMs ?? heldMs;
  if (rate === null || hold <= 0) return null;
  return Math.ceil(rate * hold * margin) + 1;
}

/**
 * Before the first release: when the oldest slot will have been held long enough for the pace to
 * need more than `limit` slots (null when the rate is unknown or a hold time is already measured).
 */
export function paceDueAt(p: PaceState, q: QuotaState, oldestGrantedAt: number, limit: number, margin = PACE_MARGIN): number | null {
  const rate = paceRate(q, p.cost ?? 1, p.out ?? 0);
  if (rate === null || p.holdMs !== null) return null;
  return oldestGrantedAt + Math.floor((limit - 1) / (rate * margin)) + 1;
}
