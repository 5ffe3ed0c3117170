// One request's record across its attempts: where it goes, what it has asked and spent, the last
// answer it got. The retry loop's steps (steps.ts) read and write it; run.ts only loops.
import type { AcquireResult, SettleRequest } from "../limiter/types";
import { decideRetry } from "../policy/backoff";
import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import type { Dialect, Tier } from "../providers/dialect";
import { DIALECTS } from "../providers/dialects";
import { sleep } from "../sleep";
import type { LimiterCalls } from "./limiter-client";
import { stampPacing } from "./pacing";
import { hideMember } from "./pooled";
import type { Deps, Plan } from "./plan";
import type { Slot } from "./slot";
import type { Route, Target } from "./target";

/** What the target's answers mean: its own dialect (a pool member's), else the request's, else every family. */
export const dialectOf = (s: Attempts, at: Target): Dialect => at.dialect ?? s.plan.dialect ?? DIALECTS.generic;

export const NO_INFO: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
/** The caller is gone; the status is never seen, but the runtime wants a Response. */
export const GONE = () => new Response(null, { status: 499 });
/** A step's answer when the request goes round again (another member, a retry). */
export const AGAIN = Symbol("again");
export type Again = typeof AGAIN;

export class Attempts {
  readonly plan: Plan;
  readonly deps: Deps;
  readonly route: Route | undefined;
  /** While it waits (queued or between attempts) a request also stops for `plan.stop`; an attempt under way runs to its answer. */
  readonly waiting: AbortSignal;
  /** Lease ids are `<requestId>:<n>`, one per ask: the same call repeated is the same call. */
  readonly requestId = crypto.randomUUID();
  /** Where the next attempt goes; undefined: a pool's member, picked when it is time. */
  target: Target | undefined;
  /** A member the next pick should pass over (it just sent this request away). */
  avoid: Target | undefined;
  asks = 0;
  attempts = 0;
  queueMs = 0;
  /** The provider's last error answer: the caller's, when retries run out. */
  last: Response | null = null;
  grant: AcquireResult | undefined;
  /** A request takes at most one member out (steps.ts, settleError). */
  tookOut = false;
  /** A minted credential was made again after a 401, once a request (steps.ts, settleError). */
  renewed = false;
  /** A pool's members it is too large for (too-large.ts): the next picks pass over them; whether a provider said so. */
  readonly tooSmall = new Set<Target>();
  tooLargeAnswered = false;
  /** An unsure estimate over a key's told limit asks again at that limit (too-large.ts): the most it is charged. */
  capped: number | undefined;
  /** When it began: its tier may take a share of the time to its deadline (tiers/fallback.ts). */
  readonly started: number;
  /** The tier its next attempt goes at: the one asked, standard once it fell back. */
  tier: Tier;
  /** Capacity refusals of its tier it waited through (`x-slotgate-tier-refusals`). */
  tierRefusals = 0;
  /** The body per dialect and tier, made once each (tiers/plan.ts). */
  readonly bodies = new Map<string, Uint8Array>();

  constructor(plan: Plan, limiter: LimiterCalls | null, deps: Deps) {
    this.plan = plan;
    this.deps = deps;
    this.started = deps.now();
    this.tier = plan.tier?.asked ?? "standard";
    this.route = plan.route;
    this.waiting = plan.stop ? AbortSignal.any([plan.signal, plan.stop]) : plan.signal;
    this.target = this.route ? undefined : { url: plan.url, headers: plan.headers, key: plan.key, limiter: limiter!, dialect: plan.dialect };
  }

  now(): number {
    return this.deps.now();
  }

  pause(ms: number): Promise<void> {
    return (this.deps.sleep ?? sleep)(ms, this.waiting);
  }

  /**
   * The gateway's headers on an answer the caller gets, and nothing that tells a pool's members
   * apart: a pooled answer names the virtual key's own key, and no member's limit or pace.
   */
  stamp(res: Response): Response {
    if (this.route) {
      hideMember(res.headers);
      if (this.target) this.route.served = this.route.memberOf?.(this.target);
    } else stampPacing(res, this.grant);
    res.headers.set("x-slotgate-key", (this.route ? this.plan.key : (this.target?.key ?? this.plan.key)).key);
    res.headers.set("x-slotgate-attempts", String(this.attempts));
    res.headers.set("x-slotgate-queue-ms", String(Math.round(this.queueMs)));
    if (this.plan.tier) res.headers.set("x-slotgate-tier-refusals", String(this.tierRefusals));
    return res;
  }

  decide(cls: OutcomeClass, attempt: number, hintMs: number | null) {
    const { plan } = this;
    return decideRetry({
      cls, attempt, hintMs, maxAttempts: plan.maxAttempts, now: this.now(), deadline: plan.deadline,
      baseMs: plan.gateway.baseBackoffMs, maxMs: plan.gateway.maxBackoffMs, random: this.deps.random,
    });
  }

  /**
   * An attempt's outcome as its settle carries it (a pool's member hears it as pooled; the key's
   * outlook of a tier, the tier it went at); a final error, the GenAI operation it ended (a
   * success's rides its usage record).
   */
  outcome(slot: Slot, cls: OutcomeClass, status: number, info: RateLimitInfo, latencyMs: number, final: boolean): SettleRequest {
    const o = final && cls !== "success" ? this.plan.operation : undefined;
    return {
      cls, status, info, latencyMs, attempt: slot.attempt, final, release: true, ...(this.route && { pooled: true }), ...(slot.tier !== "standard" && { tier: slot.tier }),
      ...(o && { ended: { op: o.op, model: o.model, ms: this.now() - o.start, error: status ? String(status) : "upstream_unreachable" } }),
    };
  }
}
