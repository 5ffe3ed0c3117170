// The tier part of an attempt (issues 35 and 39): which tier it goes at and against which limiter,
// what the key's word that a tier is shed leads to, what a tier's capacity refusal leads to, and
// the answer's `x-slotgate-tier`. steps.ts calls these.
import type { AcquireResult, KeyMeta } from "../limiter/types";
import type { RetryDecision } from "../policy/backoff";
import type { OutcomeClass } from "../policy/types";
import type { Tier } from "../providers/dialect";
import { TIER_TRIES, tierRetry } from "../tiers/fallback";
import { tierAt, tierMeta } from "../tiers/plan";
import { AGAIN, type Again, type Attempts, dialectOf } from "./attempts";
import { gatewayError, retryAfterSeconds } from "./errors";
import type { LimiterCalls } from "./limiter-client";
import type { Slot } from "./slot";
import type { Target } from "./target";

/**
 * The tier this attempt goes at on `at` (the request's, where `at`'s row offers it for the model,
 * else standard; a request that may not fall back only reaches targets that offer it: tiers/plan.ts)
 * and the limiter it counts against: `at`'s, or a tier's own (tiers/plan.ts).
 */
export function attemptTier(s: Attempts, at: Target): { tier: Tier; key: KeyMeta; limiter: LimiterCalls } {
  const t = s.plan.tier;
  const d = dialectOf(s, at);
  const tier = t ? tierAt(t, d, s.tier) : "standard";
  if (tier === "standard" || !d.tiers?.own?.includes(tier) || !s.plan.limiterFor) return { tier, key: at.key, limiter: at.limiter };
  const key = tierMeta(at.key, tier);
  return { tier, key, limiter: s.plan.limiterFor(key) };
}

/**
 * A grant at a tier the key has shed (its object's outlook, limiter/tier-outlooks.ts; not this
 * tier's probe): a request that may fall back goes at standard (on the same slot where the tier
 * shares the key's limits, else through standard's own limiter: AGAIN), and one that may not gets
 * the refusal back at once, with the wait until the tier's next probe. null: go at the tier.
 */
export function onShed(s: Attempts, grant: AcquireResult, tier: Tier, limiter: LimiterCalls, at: Target, leaseId: string): "standard" | Response | Again | null {
  if (!grant.granted || !grant.shed || tier === "standard") return null;
  const retryAfter = retryAfterSeconds(grant.shed.retryAfterMs);
  if (s.plan.tier?.fallback === "none") {
    limiter.release(leaseId);
    s.last?.headers.set("retry-after", retryAfter);
    return s.stamp(s.last ?? gatewayError("tier_unavailable", `the ${tier} tier of this key refuses nearly every request for capacity now, and x-slotgate-tier-fallback: none keeps this one from any other tier: retry after the tier's next probe`, { "retry-after": retryAfter }));
  }
  s.tier = "standard";
  if (limiter === at.limiter) return "standard";
  limiter.release(leaseId);
  return AGAIN;
}

/** An attempt sent at a tier other than standard (tiers/fallback.ts, tierRetry): waited through at the tier, or on at standard. */
export function tierStep(s: Attempts, slot: Slot, cls: OutcomeClass, d: RetryDecision): RetryDecision {
  const t = s.plan.tier;
  if (slot.tier === "standard" || !t) return d;
  const { plan } = s;
  const next = tierRetry(cls, d, {
    refusals: cls === "capacity" ? ++s.tierRefusals : s.tierRefusals, tries: TIER_TRIES, fallback: t.fallback, attempt: slot.attempt,
    maxAttempts: plan.maxAttempts, now: s.now(), started: s.started, deadline: plan.deadline,
  });
  if (next.standard) s.tier = "standard";
  return next.retry;
}

/** `x-slotgate-tier`: the tier that served the answer. */
export function stampTier(res: Response, tier: Tier): Response {
  res.headers.set("x-slotgate-tier", tier);
  return res;
}
