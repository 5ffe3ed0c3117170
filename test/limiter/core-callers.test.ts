// LimiterCore with callers and lanes: the fair queue's order under the limit, the gate and the
// quotas; per-caller retry-after; the pacing hints; the caller book fed by grants and releases.
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { MAX_CALLERS, OVERFLOW_CALLER } from "../../src/limiter/callers";
import { LimiterCore, type Outcome, SEND_JITTER_MS } from "../../src/limiter/core";
import type { Waiter } from "../../src/limiter/queue";
import type { RateLimitInfo } from "../../src/policy/types";

const cfg = { ...DEFAULT_LIMITER, startConcurrency: 2, cooldownMs: 1_000, leaseTtlMs: 10_000 };
const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
const out = (o: Partial<Outcome> = {}): Outcome => ({ cls: "success", status: 200, info: NONE, latencyMs: 1_000, attempt: 1, final: true, ...o });
const w = (id: string, caller: string | undefined, o: Partial<Waiter> = {}): Waiter => ({ id, cost: 10, deadline: 600_000, retry: false, enqueuedAt: 0, caller, ...o });

/** A key that has had an answer already, so it is not learning with one slot. */
function known(c = cfg): LimiterCore {
  const core = new LimiterCore(c);
  core.settle("seed", out(), 0);
  return core;
}

describe("LimiterCore with callers", () => {
  it("grants in the fair queue's order within the limit: a lone interactive call goes at the next free slot", () => {
    const core = known();
    for (let i = 0; i < 50; i++) core.enqueue(w(`b${i}`, "batch", { lane: "low" }), 0);
    expect(core.pump(0).granted.map((x) => x.id)).toEqual(["b0", "b1"]);
    core.enqueue(w("dev1", undefined), 1);
    expect(core.pump(1).granted).toEqual([]); // the limit holds everyone, the newcomer too
    core.release("b0", 2);
    expect(core.pump(2).granted.map((x) => x.id)).toEqual(["dev1"]);
  });

  it("the head the queue chooses holds the line when its tokens do not fit", () => {
    const core = known({ ...cfg, startConcurrency: 8 });
    core.settle("x", out({ info: { ...NONE, tokens: { limit: 60_000, remaining: 100, resetAt: 59_900 } } }), 0); // 1 token/ms
    core.enqueue(w("big", "a", { cost: 1_100 }), 0);
    core.enqueue(w("small", "b", { cost: 1 }), 0);
    expect(core.pump(0).granted).toEqual([]);
    expect(core.pump(1_000 + SEND_JITTER_MS).granted.map((x) => x.id)).toEqual(["big"]);
    expect(core.pump(1_001 + SEND_JITTER_MS).granted.map((x) => x.id)).toEqual(["small"]);
  });

  it("a queue_timeout's retry-after comes from the caller's own line and share, not the whole queue", () => {
    const core = known({ ...cfg, startConcurrency: 4 });
    for (let i = 0; i < 400; i++) core.enqueue(w(`b${i}`, "batch", { lane: "low" }), 0);
    core.pump(0);
    // 396 of the batch job's own wait: at 4 slots a second (1 s answers) and all the key, ~99 s.
    expect(core.retryAfter(10, 0, { caller: "batch", lane: "low" })).toBeGreaterThanOrEqual(98_000);
    // A developer with nothing queued would go at the next turn: the 1 s floor.
    expect(core.retryAfter(10, 0, { caller: "dev", lane: "normal" })).toBe(1_000);
    // Nobody named (the default caller) has nothing queued either.
    expect(core.retryAfter(10, 0)).toBe(1_000);
  });

  it("a waiter of a caller with its own line expires at its deadline with that line's retry-after", () => {
    const core = known({ ...cfg, startConcurrency: 1 });
    core.enqueue(w("a0", "a"), 0);
    core.enqueue(w("a1", "a", { deadline: 500 }), 0);
    core.enqueue(w("b0", "b", { deadline: 500 }), 0);
    expect(core.pump(0).granted.map((x) => x.id)).toEqual(["a0"]);
    expect(core.pump(500).expired.map((x) => x.id).sort()).toEqual(["a1", "b0"]);
    expect(core.cancel("a1")).toBeUndefined();
  });

  it("pacing hints: the limit always, the rate once a quota is known", () => {
    const core = known({ ...cfg, startConcurrency: 6 });
    expect(core.pacing()).toEqual({ limit: 6 });
    core.settle("r", out({ info: { ...NONE, requests: { limit: 1_200, remaining: 1_000, resetAt: 10_000 } } }), 0);
    expect(core.pacing()).toEqual({ limit: 6, ratePerMin: 1_200 });
    const slow = known();
    slow.settle("r", out({ info: { ...NONE, requests: { limit: 3, remaining: 3, resetAt: null } } }), 0);
    expect(slow.pacing().ratePerMin).toBe(3);
  });

  it("feeds the caller book: in flight per caller, released with its lease, in the snapshot's order", () => {
    const core = known({ ...cfg, startConcurrency: 3 });
    core.enqueue(w("a0", "alice"), 0);
    core.enqueue(w("b0", "bob", { lane: "high", cost: 30 }), 0);
    core.enqueue(w("b1", "bob", { lane: "high", cost: 30 }), 0);
    core.enqueue(w("b2", "bob", { lane: "high", cost: 30 }), 0);
    core.pump(0);
    core.release("a0", 5);
    const rows = core.callers.view(5, core.queue.queuedBy());
    expect(rows.map((r) => [r.caller, r.lane, r.inFlight, r.queued, r.served, r.share])).toEqual([
      ["bob", "high", 2, 1, 2, 0.857],
      ["alice", "normal", 0, 0, 1, 0.143],
    ]);
  });

  it(`files new labels past ${MAX_CALLERS} active callers under the overflow caller`, () => {
    const core = known({ ...cfg, startConcurrency: 1 });
    for (let i = 0; i < MAX_CALLERS + 20; i++) core.enqueue(w(`x${i}`, `caller-${i}`), 0);
    const queued = core.queue.queuedBy();
    expect(queued.size).toBe(MAX_CALLERS + 1);
    expect(queued.get(OVERFLOW_CALLER)).toBe(20);
    expect(core.callers.size).toBe(MAX_CALLERS + 1);
  });
});
