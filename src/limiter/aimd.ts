import type { LimiterConfig } from "../config/limits";

export type ChangeReason = "slow_start" | "steady_up" | "rate_limit" | "quota" | "pace" | "manual";
export interface HistoryEntry {
  at: number;
  from: number;
  to: number;
  reason: ChangeReason;
}

export const HISTORY_MAX = 200;
/** Growth probes past the last 429's level again after this many cooldowns without one. */
export const PROBE_COOLDOWNS = 2;
/** Slots a used first-attempt success adds in slow start: 1 doubles the limit per round trip. */
export const SLOW_START_STEP = 1;
/** Share of recent attempts that failed transiently above which growth pauses (a storm). */
export const STORM_SHARE = 0.5;
/** Consecutive growth steps of one reason closer than this share one history entry. */
const MERGE_MS = 1_000;

/**
 * Adaptive concurrency. Two of the limiter's three clocks live here: `lastCutAt` bounds a
 * rate-limit episode and `round` is the growth window. The send gate is the core's.
 */
export interface AimdState {
  limit: number;
  phase: "slow_start" | "steady";
  lastCutAt: number | null;
  /** Grants numbered up to here were made before the last cut: their 429s are that cut's echo. */
  cutSeq: number;
  /** The in-flight level at which the provider last refused for concurrency, and when. */
  ceiling: number | null;
  ceilingAt: number;
  round: { completions: number; peakInFlight: number };
  /** Share of recent attempts that were transient failures (exponentially weighted). */
  faultShare: number;
  /** Growth steps in a row past the ceiling: probing speeds up while nothing refuses it. */
  probeSteps: number;
  /** Probes in a row refused at the same ceiling: each doubles the wait before the next. */
  failedProbes: number;
  /** 429s of this episode granted after its first cut: a second one means per-request holds are not enough. */
  repeats: number;
  history: HistoryEntry[];
}

/** What the core knows about the request a 429 refused. */
export interface Refused {
  /** Leases held (this one included) when it was granted; null when the lease is unknown. */
  inFlightAtGrant: number | null;
  grantSeq: number | null;
  /** The core's grant counter now. */
  seqNow: number;
}

export function initAimd(cfg: LimiterConfig, limit = cfg.startConcurrency): AimdState {
  return {
    limit: clamp(limit, cfg),
    phase: "slow_start",
    lastCutAt: null,
    cutSeq: 0,
    ceiling: null,
    ceilingAt: 0,
    round: { completions: 0, peakInFlight: 0 },
    faultShare: 0,
    probeSteps: 0,
    failedProbes: 0,
    repeats: 0,
    history: [],
  };
}

/** A saved state from any earlier version: the learned parts kept, the in-memory window fresh. */
export function restoreAimd(cfg: LimiterConfig, saved: Partial<AimdState> | undefined): AimdState {
  const s = initAimd(cfg, saved?.limit ?? cfg.startConcurrency);
  if (!saved) return s;
  return {
    ...s,
    phase: saved.phase ?? s.phase,
    lastCutAt: saved.lastCutAt ?? null,
    ceiling: saved.ceiling ?? null,
    ceilingAt: saved.ceilingAt ?? 0,
    history: Array.isArray(saved.history) ? saved.history : [],
  };
}

function clamp(n: number, cfg: LimiterConfig): number {
  return Math.min(cfg.maxConcurrency, Math.max(cfg.minConcurrency, Math.floor(n)));
}

function change(s: AimdState, to: number, reason: ChangeReason, now: number, inFlight: number): HistoryEntry | null {
  s.round = { completions: 0, peakInFlight: inFlight };
  if (to === s.limit) return null;
  const entry = { at: now, from: s.limit, to, reason };
  s.limit = to;
  const last = s.history.at(-1);
  const growth = reason === "slow_start" || reason === "steady_up";
  if (growth && last && last.reason === reason && last.to === entry.from && now - last.at < MERGE_MS) {
    last.to = to;
    last.at = now;
    return entry;
  }
  s.history.push(entry);
  if (s.history.length > HISTORY_MAX) s.history.splice(0, s.history.length - HISTORY_MAX);
  return entry;
}

/** Called after each grant with the in-flight count that grant produced. */
export function noteInFlight(s: AimdState, inFlight: number): void {
  if (inFlight > s.round.peakInFlight) s.round.peakInFlight = inFlight;
}

const used = (s: AimdState, cfg: LimiterConfig) => s.round.peakInFlight >= Math.ceil((s.limit * cfg.scaleUpPercent) / 100);
const weight = (s: AimdState) => 1 / Math.max(8, s.limit);

/**
 * A first-attempt success (a success after a retry is neutral). Slow start adds a slot per used
 * success; steady growth waits for a round of `limit` successes whose peak reached
 * `scaleUpPercent` of the limit, so an idle key never inflates. Only a storm of transients pauses it.
 */
export function onSuccess(s: AimdState, cfg: LimiterConfig, now: number, inFlight: number): HistoryEntry | null {
  s.faultShare -= s.faultShare * weight(s);
  if (stormy(s)) return null;
  if (s.phase === "slow_start") return used(s, cfg) ? change(s, clamp(s.limit + SLOW_START_STEP, cfg), "slow_start", now, inFlight) : null;
  s.round.completions += 1;
  if (s.round.completions < s.limit) return null;
  if (!used(s, cfg)) {
    s.round = { completions: 0, peakInFlight: inFlight };
    return null;
  }
  return change(s, clamp(steadyTarget(s, cfg, now), cfg), "steady_up", now, inFlight);
}

/**
 * CUBIC's shape in rounds: far below the ceiling, close half the gap per round; just below it,
 * hold for a while; past it (or with none known), +1, +2, +3... as long as nothing refuses.
 */
function steadyTarget(s: AimdState, cfg: LimiterConfig, now: number): number {
  const below = s.ceiling === null ? null : s.ceiling - 1;
  if (below !== null && s.limit < below) return s.limit + Math.max(1, Math.ceil((below - s.limit) / 2));
  const wait = PROBE_COOLDOWNS * cfg.cooldownMs * 2 ** Math.min(s.failedProbes, 6);
  if (below !== null && s.limit === below && now - s.ceilingAt < wait) return s.limit;
  s.probeSteps += 1;
  return s.limit + s.probeSteps;
}

/** Most recent attempts failed transiently: growth pauses, and retries back off. */
export const stormy = (s: AimdState): boolean => s.faultShare > STORM_SHARE;

/** Transient errors say nothing about the limit: never a cut; growth pauses only in a storm. */
export function onTransient(s: AimdState): void {
  s.faultShare += (1 - s.faultShare) * weight(s);
}

/**
 * A 429 that is about concurrency (or may be: one with no quota information at all). It sets the
 * limit just under the level the provider refused at (the cap, as near as the core can tell; by
 * `decreaseFactor` when that level is unknown). 429s of requests granted before that cut are its
 * echo: they only narrow the estimate. A 429 granted after the cut, within `cooldownMs` of it,
 * means the cut was not enough: it cuts again; from the second such repeat on, it tells the
 * caller to hold the whole key.
 */
export function onConcurrencyLimit(
  s: AimdState,
  cfg: LimiterConfig,
  now: number,
  inFlight: number,
  r: Refused,
): { entry: HistoryEntry | null; holdAll: boolean } {
  s.phase = "steady";
  s.probeSteps = 0;
  const level = r.inFlightAtGrant;
  if (r.grantSeq !== null && r.grantSeq <= s.cutSeq) {
    // An echo: no new episode, but a refusal at a lower level than the cut assumed narrows it.
    if (level === null || s.ceiling === null || level >= s.ceiling) return { entry: null, holdAll: false };
    s.ceiling = level;
    return { entry: change(s, clamp(Math.min(s.limit, level - 1), cfg), "rate_limit", now, inFlight), holdAll: false };
  }
  const repeat = s.lastCutAt !== null && now - s.lastCutAt < cfg.cooldownMs;
  s.repeats = repeat ? s.repeats + 1 : 0;
  // A probe refused where the last one was: wait twice as long before the next.
  const probed = s.ceiling !== null && level !== null && level >= s.ceiling && level <= s.ceiling + 1;
  s.failedProbes = probed ? s.failedProbes + 1 : 0;
  // Where the refused request's level is known, the cap lies just under it; where it is not (a
  // lease from before a restart), cut by decreaseFactor as classic AIMD does.
  const to = level !== null ? Math.min(s.limit, level - 1) : s.limit * cfg.decreaseFactor;
  s.ceiling = level !== null ? level : Math.min(s.ceiling ?? s.limit, s.limit);
  s.ceilingAt = now;
  s.lastCutAt = now;
  s.cutSeq = r.seqNow;
  return { entry: change(s, clamp(to, cfg), "rate_limit", now, inFlight), holdAll: s.repeats >= 2 };
}

/**
 * Raises the limit to what the quota's pace needs in flight (Little's law), never above a known
 * concurrency ceiling: a quota-bound key must not become concurrency-bound.
 */
export function fitPace(s: AimdState, cfg: LimiterConfig, need: number, now: number, inFlight: number): HistoryEntry | null {
  const to = clamp(Math.min(need, paceCeiling(s, cfg)), cfg);
  return to > s.limit ? change(s, to, "pace", now, inFlight) : null;
}

/**
 * A new key's first answer: the requests its learning ramp had out, none refused, are evidence the
 * key takes that many; it does not fall back to START_CONCURRENCY under them (slow start goes on).
 */
export function startFrom(s: AimdState, cfg: LimiterConfig, level: number, now: number, inFlight: number): HistoryEntry | null {
  const to = clamp(level, cfg);
  return to > s.limit ? change(s, to, "slow_start", now, inFlight) : null;
}

/** The most pacing may raise the limit to: max, and one under a known concurrency ceiling. */
export function paceCeiling(s: AimdState, cfg: LimiterConfig): number {
  return Math.min(cfg.maxConcurrency, s.ceiling === null ? Infinity : s.ceiling - 1);
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
