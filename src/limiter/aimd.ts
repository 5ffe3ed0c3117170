import type { LimiterConfig } from "../config/limits";

export type ChangeReason = "slow_start" | "steady_up" | "rate_limit" | "quota" | "manual";
export interface HistoryEntry {
  at: number;
  from: number;
  to: number;
  reason: ChangeReason;
}

export const HISTORY_MAX = 200;
/** Growth probes past the last 429's limit again after this many cooldowns without one. */
export const PROBE_COOLDOWNS = 6;

/**
 * Adaptive concurrency. Two of the limiter's three clocks live here: `lastCutAt` debounces cuts
 * (one per rate-limit episode) and `round` is the growth window. The send gate is the caller's.
 */
export interface AimdState {
  limit: number;
  phase: "slow_start" | "steady";
  lastCutAt: number | null;
  /** The limit a rate-limit cut left: growing past it means the episode is over. */
  lastCutTo: number | null;
  /** The limit at which the provider last said 429, and when: growth waits just below it. */
  ceiling: number | null;
  ceilingAt: number;
  round: { completions: number; peakInFlight: number; clean: boolean };
  history: HistoryEntry[];
}

export function initAimd(cfg: LimiterConfig, limit = cfg.startConcurrency): AimdState {
  return {
    limit: clamp(limit, cfg),
    phase: "slow_start",
    lastCutAt: null,
    lastCutTo: null,
    ceiling: null,
    ceilingAt: 0,
    round: { completions: 0, peakInFlight: 0, clean: true },
    history: [],
  };
}

function clamp(n: number, cfg: LimiterConfig): number {
  return Math.min(cfg.maxConcurrency, Math.max(cfg.minConcurrency, Math.floor(n)));
}

function change(s: AimdState, to: number, reason: ChangeReason, now: number, inFlight: number): HistoryEntry | null {
  s.round = { completions: 0, peakInFlight: inFlight, clean: true };
  if (to === s.limit) return null;
  const entry = { at: now, from: s.limit, to, reason };
  s.limit = to;
  s.history.push(entry);
  if (s.history.length > HISTORY_MAX) s.history.splice(0, s.history.length - HISTORY_MAX);
  return entry;
}

/** Called after each grant with the in-flight count that grant produced. */
export function noteInFlight(s: AimdState, inFlight: number): void {
  if (inFlight > s.round.peakInFlight) s.round.peakInFlight = inFlight;
}

/**
 * A first-attempt success. A round is `limit` such completions; it grows the limit only if it was
 * clean and its peak in-flight reached `scaleUpPercent` of the limit, so an idle key never inflates.
 */
export function onSuccess(s: AimdState, cfg: LimiterConfig, now: number, inFlight: number): HistoryEntry | null {
  s.round.completions += 1;
  if (s.round.completions < s.limit) return null;
  const used = s.round.peakInFlight >= Math.ceil((s.limit * cfg.scaleUpPercent) / 100);
  if (!s.round.clean || !used) {
    s.round = { completions: 0, peakInFlight: inFlight, clean: true };
    return null;
  }
  const slow = s.phase === "slow_start";
  // Just below the limit that last drew a 429, stay put for a while instead of sawing into it.
  const atCeiling = !slow && s.ceiling !== null && s.limit + 1 >= s.ceiling && now - s.ceilingAt < PROBE_COOLDOWNS * cfg.cooldownMs;
  const to = atCeiling ? s.limit : clamp(slow ? s.limit * 2 : s.limit + 1, cfg);
  return change(s, to, slow ? "slow_start" : "steady_up", now, inFlight);
}

/** Transient errors say nothing about the rate limit: they spoil the round (no growth), never cut. */
export function onTransient(s: AimdState): void {
  s.round.clean = false;
}

/**
 * Multiplicative cut, at most one per `cooldownMs` (one per episode: the many 429s of one burst
 * are one signal). A `quota` cut never goes below what is in flight now: it trims headroom the
 * quota would refuse anyway, without starving the pace the quota allows.
 */
export function cut(
  s: AimdState,
  cfg: LimiterConfig,
  reason: "rate_limit" | "quota",
  now: number,
  inFlight: number,
): HistoryEntry | null {
  // Every 429 of an episode spoils the round, even the ones the debounce does not cut for.
  if (reason === "rate_limit") s.round.clean = false;
  // A 429 after the limit has grown back is a new episode, however soon it comes. (Quota trims
  // keep to the timer: they follow the quota's own pace, not a cap the limit ran into.)
  const grown = reason === "rate_limit" && s.lastCutTo !== null && s.limit > s.lastCutTo;
  if (s.lastCutAt !== null && now - s.lastCutAt < cfg.cooldownMs && !grown) return null;
  let to = clamp(s.limit * cfg.decreaseFactor, cfg);
  if (reason === "quota") to = Math.max(to, Math.min(s.limit, inFlight));
  if (to >= s.limit && reason === "quota") return null;
  if (reason === "rate_limit") {
    s.ceiling = s.limit;
    s.ceilingAt = now;
  }
  s.lastCutAt = now;
  s.lastCutTo = to;
  s.phase = "steady";
  return change(s, to, reason, now, inFlight);
}

export function setManual(s: AimdState, cfg: LimiterConfig, limit: number, now: number, inFlight: number): HistoryEntry | null {
  s.phase = "steady";
  return change(s, clamp(limit, cfg), "manual", now, inFlight);
}

/** After a config change the limit must still lie within the (new) bounds. */
export function rebound(s: AimdState, cfg: LimiterConfig, now: number, inFlight: number): HistoryEntry | null {
  const to = clamp(s.limit, cfg);
  return to === s.limit ? null : change(s, to, "manual", now, inFlight);
}
