// A quota its operator states (src/limiter/stated.ts, with learned.ts): the key's windows start
// full at it, refusals lower it, probes climb back and never above it, headers win.
import { describe, expect, it } from "vitest";
import { learnFromRefusal, probe } from "../../src/limiter/learned";
import { available, charge, describe as view, emptyQuota, fitsAt, paceRate } from "../../src/limiter/quota";
import { applyStated } from "../../src/limiter/stated";
import { observe } from "../../src/limiter/quota-reading";

const MIN = 60_000;

describe("applyStated", () => {
  it("starts each stated window full, paced at the statement from the first request", () => {
    const q = emptyQuota();
    expect(applyStated(q, { requests: 120, tokens: 60_000 }, 1_000)).toBe(true);
    expect(q.requests).toMatchObject({ limit: 120, remaining: 120, capacity: 120, periodMs: MIN, source: "refusals", stated: 120 });
    expect(q.tokens).toMatchObject({ limit: 60_000, stated: 60_000 });
    expect(q.requests!.refillPerMs).toBeCloseTo(120 / MIN);
    expect(paceRate(q, 1)! * MIN).toBeCloseTo(120);
    // The minute's bucket, then one every half second.
    for (let i = 0; i < 120; i++) charge(q, 10, 1_000);
    expect(fitsAt(q, 10, 1_000)).toBe(1_500);
    // Applied again as it stands: nothing changes.
    expect(applyStated(q, { requests: 120, tokens: 60_000 }, 1_000)).toBe(false);
    expect(available(q.requests!, 1_000)).toBe(0);
    // The admin API's view names the statement; a window nothing states, none.
    expect(view(q.requests, 1_000)).toMatchObject({ limit: 120, remaining: 0, stated: 120 });
    expect(view({ ...q.requests!, stated: undefined }, 1_000)).not.toHaveProperty("stated");
  });

  it("a stated output window is drawn by output allowances alone, and a statement taken away leaves it as learned", () => {
    const q = emptyQuota();
    expect(applyStated(q, { output: 6_000 }, 0)).toBe(true);
    expect(q.output).toMatchObject({ limit: 6_000, remaining: 6_000, source: "refusals", stated: 6_000 });
    expect(q.tokens).toBeNull();
    for (let i = 0; i < 3; i++) charge(q, 500, 0, 2_000);
    // Full: the next 2,000 of output wait 20 s of refill (100 a second); a request naming no output does not wait.
    expect(fitsAt(q, 500, 0, 1, false, 0, 2_000)).toBe(20_000);
    expect(fitsAt(q, 500, 0)).toBe(0);
    expect(paceRate(q, 500, 2_000)! * MIN).toBeCloseTo(3);
    expect(view(q.output!, 0)).toMatchObject({ limit: 6_000, remaining: 0, stated: 6_000 });
    expect(applyStated(q, {}, 0)).toBe(true);
    expect(q.output).not.toHaveProperty("stated");
  });

  it("states nothing: leaves an unknown key unknown", () => {
    const q = emptyQuota();
    expect(applyStated(q, null, 0)).toBe(false);
    expect(applyStated(q, { tokens: 500 }, 0)).toBe(true);
    expect(q.requests).toBeNull();
  });

  it("a new statement replaces the old, its level kept below it; a statement taken away leaves what was learned", () => {
    const q = emptyQuota();
    applyStated(q, { requests: 100 }, 0);
    for (let i = 0; i < 90; i++) charge(q, 1, 0);
    expect(applyStated(q, { requests: 50 }, 0)).toBe(true);
    expect(q.requests).toMatchObject({ limit: 50, stated: 50, capacity: 50 });
    expect(available(q.requests!, 0)).toBe(10);
    expect(applyStated(q, { requests: 200 }, 0)).toBe(true);
    expect(q.requests).toMatchObject({ limit: 200, stated: 200 });
    expect(applyStated(q, null, 0)).toBe(true);
    expect(q.requests!.stated).toBeUndefined();
    expect(q.requests!.limit).toBe(200);
  });

  it("leaves a window the provider's headers tell alone: a reading replaces a stated window, and the statement never comes back over it", () => {
    const q = emptyQuota();
    applyStated(q, { requests: 100 }, 0);
    observe(q, { retryAfterMs: null, requests: { limit: 500, remaining: 499, resetAt: 120, periodMs: MIN }, tokens: null }, 100);
    expect(q.requests).toMatchObject({ limit: 500, source: "headers" });
    expect(q.requests!.stated).toBeUndefined();
    expect(applyStated(q, { requests: 100 }, 200)).toBe(false);
    expect(q.requests!.limit).toBe(500);
  });
});

describe("a stated window learned from refusals", () => {
  it("a refusal lowers it (another user of the account takes a share); probes climb back to the statement and stop there", () => {
    const q = emptyQuota();
    applyStated(q, { requests: 60 }, 0);
    // 40 let through in the minute, the 41st refused: someone else has the rest.
    for (let i = 0; i < 41; i++) charge(q, 1, 1_000 + i * 100);
    learnFromRefusal(q, { kind: "requests", periodMs: MIN, limit: null }, { mark: { requests: 41, tokens: 41 }, grantedAt: 5_000, cost: 1 }, 5_100);
    expect(q.requests).toMatchObject({ limit: 42, stated: 60, source: "refusals" });
    // Successes while the pace binds raise it, never past 60.
    let t = 5_100;
    for (let i = 0; i < 20_000 && q.requests!.limit! < 60; i++) {
      t += 1_000;
      q.requests!.remaining = 0;
      q.requests!.observedAt = t;
      probe(q, 1, t);
    }
    expect(q.requests!.limit).toBe(60);
    probe(q, 1, t + 1);
    expect(q.requests!.limit).toBe(60);
  });

  it("a refusal that tells a limit above the statement (Gemini's quotaValue, a quota since raised) is held to the statement", () => {
    const q = emptyQuota();
    applyStated(q, { tokens: 10_000 }, 0);
    learnFromRefusal(q, { kind: "tokens", periodMs: MIN, limit: 50_000 }, { cost: 500 }, 1_000);
    expect(q.tokens).toMatchObject({ limit: 10_000, stated: 10_000 });
    // A refusal in another period (a per-second one) holds the statement in that period's units.
    learnFromRefusal(q, { kind: "tokens", periodMs: 1_000, limit: 5_000 }, { cost: 500 }, 2_000);
    expect(q.tokens).toMatchObject({ periodMs: 1_000, stated: 10_000 });
    expect(q.tokens!.limit).toBeCloseTo(10_000 / 60);
  });

  it("without a statement, a window learned from refusals still probes above its first count", () => {
    const q = emptyQuota();
    for (let i = 0; i < 11; i++) charge(q, 1, 1_000);
    learnFromRefusal(q, { kind: "requests", periodMs: MIN, limit: null }, { mark: { requests: 11, tokens: 11 }, grantedAt: 1_000, cost: 1 }, 1_100);
    expect(q.requests!.limit).toBe(10);
    q.requests!.remaining = 0;
    probe(q, 1, 2_000);
    expect(q.requests!.limit).toBeGreaterThan(10);
  });
});
