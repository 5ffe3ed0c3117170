// The operator's side of a key: the vars (base), the admin overrides on top, and what is learned
// and kept across restarts. Pure.
import type { LimiterConfig, LimiterOverride } from "../config/limits";
import { type AimdState, restoreAimd } from "./aimd";
import { inState, isOut, type OutState } from "./membership";
import { emptyMetrics, type Metrics } from "./metrics";
import { emptyPace, type PaceState } from "./pace";
import { emptyQuota, type QuotaState } from "./quota";
import type { Persisted } from "./state";

/** The vars and the overrides on top of them; `limit` is an action (set the limit now), not a setting. */
export class Settings {
  overrides: LimiterOverride;
  #base: LimiterConfig;

  constructor(base: LimiterConfig, overrides: LimiterOverride = {}) {
    this.#base = base;
    this.overrides = overrides;
  }

  get config(): LimiterConfig {
    return merged(this.#base, this.overrides);
  }

  /** Vars may change between deploys. */
  setBase(base: LimiterConfig): void {
    this.#base = base;
  }

  /**
   * Takes an override if the merged config passes `check` and its `limit` lies within the merged
   * bounds. Returns the reason it was refused, or the limit it asks to set now.
   */
  apply(override: LimiterOverride, check: (c: LimiterConfig) => string | null): { error: string } | { limit?: number } {
    const next = { ...this.overrides, ...override };
    const config = merged(this.#base, next);
    const bad = check(config);
    if (bad) return { error: bad };
    if (override.limit !== undefined && (override.limit < config.minConcurrency || override.limit > config.maxConcurrency))
      return { error: `limit must lie within [${config.minConcurrency}, ${config.maxConcurrency}]` };
    const { limit, ...kept } = next;
    this.overrides = kept;
    return { limit };
  }

  clear(): void {
    this.overrides = {};
  }
}

function merged(base: LimiterConfig, overrides: LimiterOverride): LimiterConfig {
  const { limit: _limit, ...rest } = overrides;
  return { ...base, ...rest };
}

/** Everything a key learns from its answers, which a restart keeps and a reset clears. */
export interface Learned {
  aimd: AimdState;
  quota: QuotaState;
  pace: PaceState;
  cooldownUntil: number;
  metrics: Metrics;
  member: OutState;
}

/** A saved state (from any earlier version), or a new key's when there is none. */
export function learnedFrom(config: LimiterConfig, saved?: Persisted): Learned {
  return {
    aimd: restoreAimd(config, saved?.aimd),
    quota: { ...emptyQuota(), ...saved?.quota },
    pace: { ...emptyPace(), ...saved?.pace },
    cooldownUntil: saved?.cooldownUntil ?? 0,
    metrics: saved?.metrics ?? emptyMetrics(),
    // A probe in flight does not survive its object: the next request to ask probes again.
    member: { ...inState(), ...saved?.member, probe: null },
  };
}

/** What a save writes: the learned state (the grant log is memory only) and the overrides. */
export function persistedOf(l: Learned, overrides: LimiterOverride): Persisted {
  const member = isOut(l.member) ? { ...l.member, probe: null } : undefined;
  return { aimd: l.aimd, quota: { ...l.quota, recent: undefined }, cooldownUntil: l.cooldownUntil, metrics: l.metrics, overrides, pace: l.pace, member };
}
