// A request refused for want of quota keeps its claim on the refill it waits for.
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { CLAIM_GRACE_MS, LimiterCore, type Outcome, SEND_JITTER_MS } from "../../src/limiter/core";
import { Claims } from "../../src/limiter/claims";
import type { Waiter } from "../../src/limiter/queue";
import type { RateLimitInfo } from "../../src/policy/types";

const cfg = { ...DEFAULT_LIMITER, startConcurrency: 8 };
const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
const w = (id: string, o: Partial<Waiter> = {}): Waiter => ({ id, cost: 4_000, deadline: 600_000, retry: false, enqueuedAt: 0, ...o });
/** Anthropic-like: 400k TPM enforced as a 1 s bucket (6,667 tokens); the reading's level is `remaining`. */
const tokens = (remaining: number, retryAfterMs: number | null = null): RateLimitInfo => ({ ...NONE, retryAfterMs, tokens: { limit: 400_000, remaining, resetAt: null } });
const ok = (info: RateLimitInfo, o: Partial<Outcome> = {}): Outcome => ({ cls: "success", status: 200, info, latencyMs: 20, attempt: 1, final: true, ...o });
const refused = (info: RateLimitInfo, next?: string): Outcome => ({ cls: "rate_limit", status: 429, info, latencyMs: 10, attempt: 1, final: next === undefined, next });

/** A key whose bucket held 6,667 tokens when `seed` (4,000) found it full; 6.67 tokens/ms. */
function keyed(): LimiterCore {
  const core = new LimiterCore(cfg);
  core.enqueue(w("seed"), 0);
  core.pump(0);
  core.settle("seed", ok(tokens(2_667)), 20);
  core.release("seed", 20);
  return core;
}

/** `a:1` refused at 710 (2,900 tokens left, back in 170 ms), its retry to come as `a:2`; `other` queued at 720. */
function refusedWithOtherWaiting(): LimiterCore {
  const core = keyed();
  core.enqueue(w("a:1"), 100);
  core.pump(700);
  core.settle("a:1", refused(tokens(2_900, 170), "a:2"), 710);
  core.release("a:1", 710);
  core.enqueue(w("other"), 720);
  return core;
}

describe("claims on the refill", () => {
  it("a refused request's retry takes the refill it waited for, though another caller's waiter was first in line", () => {
    const core = keyed();
    // `a` went early and was refused: 2,900 left when it needed 4,000.
    core.enqueue(w("a:1", { caller: "a" }), 100);
    expect(core.pump(700).granted.map((x) => x.id)).toEqual(["a:1"]);
    core.enqueue(w("other", { caller: "b" }), 705);
    core.settle("a:1", refused(tokens(2_900, 170), "a:2"), 710);
    core.release("a:1", 710);
    // By 1,000 the bucket holds enough for one; a's retry is still on its way back (its Worker
    // waited out the hint, then called). Without the claim, "other" would take that refill.
    expect(core.pump(1_000).granted).toEqual([]);
    core.enqueue(w("a:2", { caller: "a", retry: true }), 1_010);
    expect(core.pump(1_010).granted.map((x) => x.id)).toEqual(["a:2"]);
    expect(core.claims.size).toBe(0);
    // "other" goes when the bucket has refilled past a's share, not before.
    expect(core.pump(1_011).granted).toEqual([]);
    expect(core.pump(core.wakeAt(1_011)!).granted.map((x) => x.id)).toEqual(["other"]);
  });

  it("a claim whose retry never comes ends after the hint and a grace, and the line moves on", () => {
    const core = refusedWithOtherWaiting();
    expect(core.pump(1_500).granted).toEqual([]); // the claim holds the refill for a:2
    const end = 710 + 170 + CLAIM_GRACE_MS;
    expect(core.wakeAt(1_500)).toBeLessThanOrEqual(end);
    expect(core.pump(end).granted.map((x) => x.id)).toEqual(["other"]);
    expect(core.claims.size).toBe(0);
  });

  it("a retry cancelled (its caller left) drops its claim at once", () => {
    const core = refusedWithOtherWaiting();
    core.cancel("a:2");
    expect(core.claims.size).toBe(0);
    expect(core.pump(900 + SEND_JITTER_MS).granted.map((x) => x.id)).toEqual(["other"]);
  });

  it("a final refusal, or a transient failure, claims nothing", () => {
    const core = keyed();
    core.enqueue(w("a:1"), 100);
    core.enqueue(w("b:1"), 100);
    core.pump(700);
    core.settle("a:1", refused(tokens(2_900, 170)), 710);
    core.settle("b:1", { ...ok(NONE), cls: "transient", status: 503, final: false, next: "b:2" }, 710);
    expect(core.claims.size).toBe(0);
  });
});

describe("Claims", () => {
  it("adds up what the claims before each one need, in the order they were made", () => {
    const c = new Claims();
    c.add("x", { cost: 10, until: 50 });
    c.add("y", { cost: 5, out: 3, until: 20 });
    expect([...c.inOrder()]).toEqual([{ id: "x", requests: 1, tokens: 10, output: 0 }, { id: "y", requests: 2, tokens: 15, output: 3 }]);
    expect(c.total()).toEqual({ requests: 2, tokens: 15, output: 3 });
    expect(c.earliestEnd()).toBe(20);
    c.expire(20);
    expect([...c.inOrder()].map((x) => x.id)).toEqual(["x"]);
    expect(c.drop("x")).toBe(true);
    expect(c.earliestEnd()).toBeNull();
  });
});
