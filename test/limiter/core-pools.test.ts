// LimiterCore for a pool member: pooled requests see its in/out state (membership.ts) and learn its
// view.
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { LimiterCore, type Outcome } from "../../src/limiter/core";
import type { Waiter } from "../../src/limiter/queue";
import type { RateLimitInfo } from "../../src/policy/types";

const cfg = { ...DEFAULT_LIMITER, startConcurrency: 4, cooldownMs: 1_000, leaseTtlMs: 10_000 };
const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
const out = (o: Partial<Outcome> = {}): Outcome => ({ cls: "success", status: 200, info: NONE, latencyMs: 100, attempt: 1, final: true, ...o });
const w = (id: string, o: Partial<Waiter> = {}): Waiter => ({ id, cost: 10, deadline: 600_000, retry: false, enqueuedAt: 0, ...o });

function known(): LimiterCore {
  const core = new LimiterCore(cfg);
  core.settle("seed", out(), 0);
  return core;
}

describe("LimiterCore for a pool member", () => {
  it("a hard-quota answer to a pooled request takes the member out for pooled requests only", () => {
    const core = known();
    core.enqueue(w("r1", { pooled: true }), 0);
    core.pump(0);
    core.settle("r1", out({ cls: "hard_quota", status: 429, pooled: true, out: "insufficient_quota", outMs: 10_000 }), 100);
    core.release("r1", 100);
    expect(core.enqueue(w("r2", { pooled: true }), 200)).toEqual({ kind: "rejected", retryAfterMs: 9_900, out: true });
    // Someone holding the key itself still gets the provider's own answer, as before pools.
    expect(core.enqueue(w("own"), 200)).toEqual({ kind: "queued" });
    expect(core.view(10, 200)).toMatchObject({ outMs: 9_900, outReason: "insufficient_quota" });
    // Its time up, one probe goes; its good answer puts the member back in.
    expect(core.enqueue(w("probe", { pooled: true }), 10_100)).toEqual({ kind: "queued" });
    expect(core.enqueue(w("other", { pooled: true }), 10_100)).toMatchObject({ kind: "rejected", out: true });
    // Its time is up, but while the probe is out the others are told to stay away a moment (not 0 ms: no spinning).
    expect(core.view(10, 10_100).outMs).toBe(1_000);
    core.pump(10_100);
    core.settle("probe", out({ pooled: true }), 10_200);
    expect(core.enqueue(w("after", { pooled: true }), 10_300)).toEqual({ kind: "queued" });
    expect(core.view(10, 10_300).outMs).toBeUndefined();
  });

  it("going out sends its queued pooled waiters to the other members at once; others stay in line", () => {
    const core = known();
    for (let i = 0; i < 4; i++) core.enqueue(w(`g${i}`, { pooled: true }), 0);
    core.pump(0);
    core.enqueue(w("p1", { pooled: true }), 1);
    core.enqueue(w("own"), 1);
    expect(core.pump(1).granted).toEqual([]);
    core.settle("g0", out({ cls: "hard_quota", status: 429, pooled: true, out: "insufficient_quota", outMs: 10_000 }), 2);
    core.release("g0", 2);
    const { granted, ousted } = core.pump(2);
    expect(ousted.map((x) => x.id)).toEqual(["p1"]);
    expect(granted.map((x) => x.id)).toEqual(["own"]);
    expect(core.pump(3).ousted).toEqual([]);
  });

  it("survives a restart while out (the probe in flight does not)", () => {
    const core = known();
    core.enqueue(w("r1", { pooled: true }), 0);
    core.pump(0);
    core.settle("r1", out({ cls: "fatal", status: 401, pooled: true, out: "401", outMs: 5_000 }), 0);
    const again = new LimiterCore(cfg, JSON.parse(JSON.stringify(core.persisted())));
    expect(again.enqueue(w("r2", { pooled: true }), 1_000)).toMatchObject({ kind: "rejected", out: true });
  });

  it("tells a pooled request how long one more would wait, and the pace its quota allows", () => {
    const core = known();
    for (let i = 0; i < 4; i++) core.enqueue(w(`g${i}`), 0);
    core.pump(0);
    const busy = core.view(10, 0);
    expect(busy.waitMs).toBeGreaterThan(0);
    expect(busy.perMin).toBeUndefined(); // no quota told yet: the members weigh the same
    core.release("g0", 1);
    expect(core.view(10, 1).waitMs).toBe(0);
    // A requests window of 600 a minute told: that is its pace.
    core.settle("g1", out({ info: { ...NONE, requests: { limit: 600, remaining: 600, resetAt: null } } }), 2);
    expect(core.view(10, 2).perMin).toBe(600);
  });
});
