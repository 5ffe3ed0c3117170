// The limiter policy's rules, one test each, on the pure core (time passed in).
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { ADMISSION_LAG_MS, LEARN_MS, LEARN_STEP_MS, LimiterCore, type Outcome } from "../../src/limiter/core";
import type { Waiter } from "../../src/limiter/queue";
import type { QuotaReading, RateLimitInfo } from "../../src/policy/types";

const cfg = { ...DEFAULT_LIMITER, startConcurrency: 4, cooldownMs: 1_000 };
const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
const out = (o: Partial<Outcome> = {}): Outcome => ({ cls: "success", status: 200, info: NONE, latencyMs: 100, attempt: 1, final: true, ...o });
const rpm = (limit: number, remaining: number, resetAt: number | null = null): RateLimitInfo => ({ ...NONE, requests: { limit, remaining, resetAt } as QuotaReading });
const w = (id: string, o: Partial<Waiter> = {}): Waiter => ({ id, cost: 10, deadline: 600_000, retry: false, enqueuedAt: 0, ...o });

function known(c = cfg, info: RateLimitInfo = NONE): LimiterCore {
  const core = new LimiterCore(c);
  core.settle("seed", out({ info }), 0);
  return core;
}

function line(core: LimiterCore, n: number, now = 0, prefix = "q"): string[] {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  for (const id of ids) core.enqueue(w(id), now);
  return core.pump(now).granted.map((g) => g.id);
}

describe("a key never seen before", () => {
  it("sends one request alone until its answer comes back, then opens half of START_CONCURRENCY and one more slot a step (the answer's latency over START_CONCURRENCY)", () => {
    const core = new LimiterCore({ ...cfg, startConcurrency: 8 });
    expect(line(core, 20)).toEqual(["q0"]);
    core.settle("q0", out({ latencyMs: 200 }), 300); // START 8: a step of 25 ms
    core.release("q0", 300);
    expect(core.pump(300).granted).toHaveLength(4);
    expect(core.wakeAt(300)).toBe(325);
    expect(core.pump(324).granted).toHaveLength(0);
    expect(core.pump(325).granted).toHaveLength(1);
    // Within half an answer's time the key is at START_CONCURRENCY, as it was at once before.
    expect(core.pump(400).granted).toHaveLength(3);
    expect(core.pump(500).granted).toHaveLength(0);
    expect(core.inFlight).toBe(8);
  });

  it("the opening lets a concurrency cap under START_CONCURRENCY refuse one request, not a burst: the refusal ends it", () => {
    const core = new LimiterCore({ ...cfg, startConcurrency: 16 });
    for (let i = 0; i < 40; i++) core.enqueue(w(`q${i}`), 0);
    core.pump(0);
    core.settle("q0", out({ latencyMs: 320 }), 320); // a step of 20 ms
    core.release("q0", 320);
    let granted: string[] = [];
    for (let t = 320; t <= 320 + 5 * 20; t += 20) granted = [...granted, ...core.pump(t).granted.map((g) => g.id)];
    expect(granted).toHaveLength(13); // 8 at once, then one each 20 ms
    // The 13th is refused (a cap of 12, quota with room) before the 14th would go: one refusal, then the cut decides.
    core.settle(granted[12]!, out({ cls: "rate_limit", status: 429, final: false, info: { ...rpm(100_000, 99_000, 1_000), retryAfterMs: 1_000 } }), 430);
    core.release(granted[12]!, 430);
    expect(core.aimd.limit).toBe(12);
    expect(core.limitAt(10_000)).toBe(12);
    expect(core.pump(10_000).granted).toHaveLength(0);
  });

  it("keeps what its learning ramp had out, none refused, when the first answer comes (it does not fall back to START_CONCURRENCY)", () => {
    const core = new LimiterCore({ ...cfg, startConcurrency: 8 });
    expect(line(core, 40)).toEqual(["q0"]);
    core.pump(LEARN_MS + 20 * LEARN_STEP_MS); // 22 out while the first answer is slow
    expect(core.inFlight).toBe(22);
    core.settle("q0", out({ latencyMs: 3_000 }), 3_000);
    expect(core.aimd.limit).toBe(22);
    expect(core.aimd.history.at(-1)).toMatchObject({ from: 8, to: 22, reason: "slow_start" });
  });

  it("and while its answer is slow, opens one at a time each LEARN_STEP_MS after LEARN_MS (a refusal comes back fast; a slow answer says nothing of what is left)", () => {
    const core = new LimiterCore({ ...cfg, startConcurrency: 8 });
    expect(line(core, 20)).toEqual(["q0"]);
    expect(core.wakeAt(0)).toBe(LEARN_MS);
    expect(core.pump(LEARN_MS - 1).granted).toEqual([]);
    expect(core.pump(LEARN_MS).granted).toHaveLength(1); // 2 out
    expect(core.wakeAt(LEARN_MS)).toBe(LEARN_MS + LEARN_STEP_MS);
    expect(core.pump(LEARN_MS + LEARN_STEP_MS - 1).granted).toEqual([]);
    expect(core.pump(LEARN_MS + LEARN_STEP_MS).granted).toHaveLength(1); // 3 out
    // Past START_CONCURRENCY (8) while no answer comes: a 3 s answer at 600 RPM needs 30 out.
    expect(core.pump(LEARN_MS + 8 * LEARN_STEP_MS).granted).toHaveLength(7); // 10 out
    expect(core.wakeAt(LEARN_MS + 8 * LEARN_STEP_MS)).toBe(LEARN_MS + 9 * LEARN_STEP_MS);
    // The first answer (a refusal too) ends it: the learned limit is in force at once.
    core.settle("q1", out({ cls: "rate_limit", status: 429, final: false, info: { ...NONE, retryAfterMs: 100 } }), LEARN_MS + 8 * LEARN_STEP_MS + 10);
    expect(core.learning()).toBe(false);
    expect(core.limitAt(LEARN_MS + 9 * LEARN_STEP_MS)).toBe(core.aimd.limit); // the ramp is over; the 429 cut
  });
});

describe("quotas pace, they never cut", () => {
  it("a window under 10% of its limit leaves the concurrency limit alone", () => {
    const core = known({ ...cfg, startConcurrency: 32 });
    for (let i = 0; i < 50; i++) core.settle(`r${i}`, out({ info: rpm(600, 1, 100_000) }), i * 10);
    expect(core.aimd.limit).toBe(32);
    expect(core.aimd.history.filter((h) => h.reason === "quota" || h.reason === "rate_limit")).toEqual([]);
  });

  it("a quota-bound key is given what its pace needs in flight (rate x hold time, with margin)", () => {
    // 600 RPM = 0.01 per ms; answers take 3 s: the pace needs 30 in flight, plus the margin.
    const core = new LimiterCore(cfg);
    core.settle("seed", out({ latencyMs: 3_000, info: rpm(600, 0, 60_000) }), 0);
    for (let i = 0; i < 100; i++) core.enqueue(w(`q${i}`), 0);
    for (let t = 0; t < 10_000; t += 100) core.pump(t);
    expect(core.aimd.limit).toBeGreaterThanOrEqual(30);
    expect(core.aimd.history.some((h) => h.reason === "pace")).toBe(true);
  });

  it("but a key whose windows have plenty stays with slow start: a concurrency cap may hide there", () => {
    const core = known(cfg, rpm(100_000, 99_000, 1_000));
    core.settle("lat", out({ latencyMs: 3_000 }), 0);
    expect(line(core, 100)).toHaveLength(4);
    expect(core.aimd.limit).toBe(4);
  });

  it("a reading is dated when it was sent (the grant, or the answer's start if later): the refill since counts", () => {
    const core = known({ ...cfg, startConcurrency: 8 }, rpm(60, 2, 58_000)); // 1 per second
    expect(line(core, 1)).toEqual(["q0"]);
    // q0 was sent at 0 and left 0; its answer took 900 ms. The reading is dated ADMISSION_LAG_MS
    // after the send, when the provider surely had it: one more is due a second after that, not a
    // second after the answer. (All the key is known to hold is q0's one: no margin past full.)
    core.settle("q0", out({ latencyMs: 900, info: rpm(60, 0, 60_000) }), 900);
    core.enqueue(w("next"), 900);
    expect(core.wakeAt(900)).toBe(ADMISSION_LAG_MS + 1_000);
  });
});

describe("two kinds of 429", () => {
  const refused = (info: RateLimitInfo) => out({ cls: "rate_limit", status: 429, final: false, info: { ...info, retryAfterMs: 1_000 } });

  it("with room in every window: a concurrency signal; cut just under the refused level, hold only that request", () => {
    const core = known({ ...cfg, startConcurrency: 20 }, rpm(100_000, 99_000, 1_000));
    const ids = line(core, 20);
    core.settle(ids[12]!, refused(rpm(100_000, 98_900, 1_000)), 50); // the 13th in flight was refused
    expect(core.aimd.limit).toBe(12);
    expect(core.aimd.ceiling).toBe(13);
    expect(core.cooldownUntil).toBe(0);
    expect(core.aimd.history.at(-1)).toMatchObject({ from: 20, to: 12, reason: "rate_limit" });
  });

  it("an echo (granted before the cut) only narrows the estimate; repeats after the cut escalate to holding the whole key", () => {
    const core = known({ ...cfg, startConcurrency: 20 }, rpm(100_000, 99_000, 1_000));
    const ids = line(core, 20);
    core.settle(ids[15]!, refused(rpm(100_000, 98_900, 1_000)), 50); // level 16: limit 15
    core.settle(ids[17]!, refused(rpm(100_000, 98_900, 1_000)), 51); // echo at 18: nothing
    expect(core.aimd.limit).toBe(15);
    core.settle(ids[12]!, refused(rpm(100_000, 98_900, 1_000)), 52); // echo at 13: narrows to 12
    expect(core.aimd.limit).toBe(12);
    expect(core.cooldownUntil).toBe(0);
    for (const id of ids) core.release(id, 60);
    const again = line(core, 12, 60, "r");
    core.settle(again[11]!, refused(rpm(100_000, 98_900, 1_000)), 100); // granted after the cut, at 12
    expect(core.aimd.limit).toBe(11);
    expect(core.cooldownUntil).toBe(0);
    for (const id of again) core.release(id, 105);
    const third = line(core, 11, 105, "s");
    core.settle(third[10]!, refused(rpm(100_000, 98_900, 1_000)), 110); // granted after that cut, at 11
    expect(core.aimd.limit).toBe(10);
    expect(core.cooldownUntil).toBe(1_110);
  });

  it("a 429 whose own reading could not pay, though the model has refilled since: still an empty window", () => {
    const core = known({ ...cfg, startConcurrency: 8 }, rpm(600, 500, 60_000));
    const ids = line(core, 8);
    // 0.4 of a request left when refused; by now the model has refilled past 1. The refusal counts as it stood.
    core.settle(ids[0]!, refused({ ...NONE, tokens: null, requests: { limit: 600, remaining: 0, resetAt: 60_000 } }), 500);
    expect(core.cooldownUntil).toBe(1_500);
    expect(core.aimd.limit).toBe(8);
  });

  it("with an empty window: everyone waits for the hint, and concurrency stays", () => {
    const core = known({ ...cfg, startConcurrency: 8 }, rpm(600, 9, 60_000));
    const ids = line(core, 8);
    core.settle(ids[5]!, refused(rpm(600, 0, 60_000)), 50);
    expect(core.cooldownUntil).toBe(1_050);
    expect(core.aimd.limit).toBe(8);
  });

  it("with no quota information at all: cut and hold everyone (it may be either)", () => {
    const core = known({ ...cfg, startConcurrency: 8 });
    const ids = line(core, 8);
    core.settle(ids[6]!, refused(NONE), 50);
    expect(core.aimd.limit).toBe(6);
    expect(core.cooldownUntil).toBe(1_050);
  });

  it("a refusal for concurrency pauses nobody, and its retry takes the next free slot, ahead of the line, not the hint's second", () => {
    const core = known({ ...cfg, startConcurrency: 16 }, rpm(100_000, 99_000, 1_000));
    const ids = line(core, 16);
    for (let i = 0; i < 10; i++) core.enqueue(w(`later${i}`), 5);
    const o = { ...refused(rpm(100_000, 98_900, 1_000)), next: `${ids[12]}:2` };
    core.settle(ids[12]!, o, 10); // the 13th in flight: a cap of 12
    core.release(ids[12]!, 10);
    expect(core.cooldownUntil).toBe(0);
    expect(core.retryWord(o, 10)).toEqual({ retry: "now" });
    // It comes back at once; the four over the cap hold their slots a moment, then the first slot to free is its.
    core.enqueue(w(`${ids[12]}:2`, { retry: true }), 12);
    for (const id of ids.slice(13)) core.release(id, 15);
    expect(core.pump(15).granted).toEqual([]);
    core.release(ids[0]!, 300);
    expect(core.pump(300).granted.map((g) => g.id)).toEqual([`${ids[12]}:2`]);
  });

  it("a refusal that shut the gate (an empty window, no quota information) keeps its wait: the hint", () => {
    for (const [learned, info] of [[rpm(600, 9, 60_000), rpm(600, 0, 60_000)], [NONE, NONE]] as const) {
      const core = known({ ...cfg, startConcurrency: 8 }, learned);
      const ids = line(core, 8);
      const o = { ...refused(info), next: "x:2" };
      core.settle(ids[5]!, o, 50);
      expect(core.retryWord(o, 50)).toEqual({ retry: "wait" });
    }
  });
});

describe("a hint longer than the deadline", () => {
  it("turns away at once the waiters already queued whose deadline the gate outlasts", () => {
    const core = known({ ...cfg, startConcurrency: 1 });
    expect(line(core, 1)).toEqual(["q0"]);
    core.enqueue(w("soon", { deadline: 5_000 }), 0);
    core.enqueue(w("late", { deadline: 7_200_000 }), 0);
    core.settle("q0", out({ cls: "rate_limit", status: 429, final: true, info: { ...NONE, retryAfterMs: 3_600_000 } }), 10);
    core.release("q0", 10);
    const { granted, expired } = core.pump(10);
    expect(granted).toEqual([]);
    expect(expired.map((x) => x.id)).toEqual(["soon"]);
    expect(core.retryAfter(10, 10)).toBeGreaterThanOrEqual(3_600_000 - 10);
  });
});

describe("transients", () => {
  it("a fault says nothing about the next slot: its retry comes at once; in a storm, or when it is the last attempt, it waits", () => {
    const core = known({ ...cfg, startConcurrency: 8 });
    const fault = out({ cls: "transient", status: 529, final: false });
    const ids = line(core, 8);
    core.settle(ids[0]!, fault, 10);
    expect(core.retryWord(fault, 10)).toEqual({ retry: "now" });
    expect(core.retryWord({ ...fault, final: true }, 10)).toEqual({ retry: "wait" });
    // Most recent attempts failing is a storm: the Worker's backoff again.
    for (let i = 0; i < 40; i++) core.settle(`f${i}`, fault, 20 + i);
    expect(core.retryWord(fault, 100)).toEqual({ retry: "wait" });
    // A success is never retried.
    expect(core.retryWord(out(), 100)).toEqual({ retry: "wait" });
  });

  it("never cut; the other successes of the round still grow the limit", () => {
    const core = known({ ...cfg, startConcurrency: 8 });
    const ids = line(core, 8);
    core.settle(ids[0]!, out({ cls: "transient", status: 529, final: false }), 10);
    for (const id of ids.slice(1)) core.settle(id, out(), 20);
    expect(core.aimd.limit).toBeGreaterThan(8);
    expect(core.aimd.history.every((h) => h.to > h.from)).toBe(true);
  });
});

describe("learned state", () => {
  it("survives a restart: limit, ceiling, quotas and pace", () => {
    const core = known({ ...cfg, startConcurrency: 20 }, rpm(100_000, 99_000, 1_000));
    const ids = line(core, 20);
    core.settle(ids[12]!, out({ cls: "rate_limit", status: 429, info: rpm(100_000, 98_000, 1_000) }), 50);
    const again = new LimiterCore(cfg, JSON.parse(JSON.stringify(core.persisted())));
    expect(again.aimd.limit).toBe(12);
    expect(again.aimd.ceiling).toBe(13);
    expect(again.pace).toEqual(core.pace);
    expect(again.learning(1_000)).toBe(false);
  });
});
