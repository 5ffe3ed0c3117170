// The tier part of an attempt (issue 35): which tier it goes at and against which limiter, what a
// tier's capacity refusal leads to, and the answer's `x-slotgate-tier`. steps.ts calls these.
import type { KeyMeta } from "../limiter/types";
import type { RetryDecision } from "../policy/backoff";
import type { OutcomeClass } from "../policy/types";
import type { Tier } from "../providers/dialect";
import { tierRetry, worthTrying } from "../tiers/fallback";
import { outlookOf, tierAt, tierMeta } from "../tiers/plan";
import { type Attempts, dialectOf } from "./attempts";
import type { LimiterCalls } from "./limiter-client";
import type { Slot } from "./steps";
import type { Target } from "./target";

/**
 * The tier this attempt goes at on `at` (the request's, where `at`'s row offers it for the model,
 * else standard; a tier the key's outlook says is shed is probed, not tried by every request), and
 * the limiter it counts against: `at`'s, or a tier's own (tiers/plan.ts).
 */
export function attemptTier(s: Attempts, at: Target): { tier: Tier; key: KeyMeta; limiter: LimiterCalls } {
  const t = s.plan.tier;
  const d = dialectOf(s, at);
  let tier = t ? tierAt(t, d, s.tier) : "standard";
  // Weighed at every attempt: a request that waited on its tier goes at standard once the tier looks shed.
  if (tier !== "standard" && !worthTrying(outlookOf(at.key.key, tier), s.now())) tier = s.tier = "standard";
  if (tier === "standard" || !d.tiers?.own?.includes(tier) || !s.plan.limiterFor) return { tier, key: at.key, limiter: at.limiter };
  const key = tierMeta(at.key, tier);
  return { tier, key, limiter: s.plan.limiterFor(key) };
}

/** An attempt sent at a tier other than standard (tiers/fallback.ts, tierRetry): waited through at the tier, or on at standard. */
export function tierStep(s: Attempts, slot: Slot, cls: OutcomeClass, d: RetryDecision): RetryDecision {
  const t = s.plan.tier;
  if (slot.tier === "standard" || !t) return d;
  const { plan } = s;
  const next = tierRetry(outlookOf(slot.at.key.key, slot.tier), cls, d, {
    refusals: cls === "capacity" ? ++s.tierRefusals : s.tierRefusals, fallback: t.fallback, attempt: slot.attempt,
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
