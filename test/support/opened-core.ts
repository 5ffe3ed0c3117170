// A key's LimiterCore past its opening, and the outcomes, waiters and readings the core tests feed it.
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { LimiterCore, type Outcome } from "../../src/limiter/core";
import type { Waiter } from "../../src/limiter/queue";
import type { RateLimitInfo } from "../../src/policy/types";

export const cfg = { ...DEFAULT_LIMITER, startConcurrency: 16, leaseTtlMs: 60_000 };
export const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
export const out = (o: Partial<Outcome> = {}): Outcome => ({ cls: "success", status: 200, info: NONE, latencyMs: 50, attempt: 1, final: true, ...o });
export const w = (id: string, o: Partial<Waiter> = {}): Waiter => ({ id, cost: 10, deadline: 60_000, retry: false, enqueuedAt: 0, ...o });
export const reading = (requests: number, tokens: number, limits = { requests: 100, tokens: 10_000 }): RateLimitInfo => ({
  retryAfterMs: null, requests: { limit: limits.requests, remaining: requests, resetAt: null }, tokens: { limit: limits.tokens, remaining: tokens, resetAt: null },
});

/** A key past its opening (its first answer came long ago), with quota windows when `info` says so. */
export function open(info: RateLimitInfo = NONE): LimiterCore {
  const core = new LimiterCore(cfg, undefined, undefined, { epoch: 7, prefix: "t" });
  core.enqueue(w("seed"), 0);
  core.pump(0);
  core.settle("seed", out({ info }), 10);
  core.release("seed", 10);
  return core;
}
