// How a provider's reading sets a quota window (src/limiter/quota-reading.ts): owed grants, refill, bucket size.
import { describe, expect, it } from "vitest";
import { available, charge, emptyQuota, fitsAt } from "../../src/limiter/quota";
import { observe, roomInReading } from "../../src/limiter/quota-reading";
import type { QuotaReading, RateLimitInfo } from "../../src/policy/types";

const info = (requests: QuotaReading | null, tokens: QuotaReading | null = null): RateLimitInfo => ({ retryAfterMs: null, requests, tokens });

describe("a reading into the quota model", () => {
  it("what it granted refills with time, even when no new reading ever comes", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 3, remaining: 3, resetAt: null }), 0); // 3 per minute
    for (let i = 0; i < 3; i++) charge(q, 1, 0);
    expect(fitsAt(q, 1, 0)).toBe(20_000);
    expect(fitsAt(q, 1, 600_000)).toBe(600_000);
    expect(available(q.requests!, 600_000)).toBe(3);
  });

  it("subtracts what it granted since the reading", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 60, remaining: 3, resetAt: 57_000 }), 0); // refills 57 in 57 s: 1/s
    charge(q, 10, 0);
    charge(q, 10, 0);
    expect(available(q.requests!, 0)).toBe(1);
    charge(q, 10, 0);
    expect(fitsAt(q, 10, 0)).toBe(1_000); // the next unit arrives in a second
  });

  it("refills continuously at the rate the reset implies, up to the limit", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 600, remaining: 0, resetAt: 60_000 }), 0); // 10/s
    expect(available(q.requests!, 500)).toBe(5);
    expect(available(q.requests!, 120_000)).toBe(600);
    expect(fitsAt(q, 1, 0)).toBe(100);
  });

  it("never assumes a refill faster than the limit per minute, even when the reset is near", () => {
    const q = emptyQuota();
    // 12,000 RPM enforced as a 60-request bucket: empty, full again in 300 ms.
    observe(q, info({ limit: 12_000, remaining: 0, resetAt: 300 }), 0);
    expect(available(q.requests!, 300)).toBe(60); // 200/s, not 40,000/s
    // A daily window refilling slower than per-minute keeps its own, slower rate.
    observe(q, info({ limit: 14_400, remaining: 14_000, resetAt: 400_000 }), 0);
    expect(q.requests!.refillPerMs).toBe(0.001);
  });

  it("grants made after a reading stay owed, below empty, and are paid back by the refill", () => {
    const q = emptyQuota();
    const mark = { ...q.granted };
    charge(q, 1, 0);
    charge(q, 1, 0);
    observe(q, info(null, { limit: 60, remaining: 1, resetAt: null }), 0, mark); // 1 - 2 grants since
    expect(q.tokens!.remaining).toBe(-1);
    expect(fitsAt(q, 1, 0)).toBe(2_000);
  });

  it("a reading is dated when it was true (the grant), and an older one arriving late is not taken", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 60, remaining: 0, resetAt: 60_000 }), 500, undefined, 0); // true at 0, read at 500
    expect(available(q.requests!, 500)).toBeCloseTo(0.5);
    observe(q, info({ limit: 60, remaining: 5, resetAt: 55_000 }), 600, undefined, -100); // from before: ignored
    expect(available(q.requests!, 600)).toBeCloseTo(0.6);
  });

  it("learns a bucket smaller than the limit (a per-minute limit enforced per second)", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 600, remaining: 4, resetAt: 600 }), 0); // 10/s, full in 0.6 s: holds 10
    expect(q.requests!.capacity).toBe(10);
    expect(available(q.requests!, 60_000)).toBe(10); // an idle minute does not fill it to 600
  });

  it("sizes a bucket by what an admitted request found in it, not by a reset rounded up to the second", () => {
    const q = emptyQuota();
    // Anthropic: 400k TPM as a 1 s bucket of 6,667. A 4,000-token request found it full and left
    // 2,667; the reset says "full again" at the next whole second, up to 1 s later than it will be.
    const took = { requests: 1, tokens: 4_000 };
    observe(q, info(null, { limit: 400_000, remaining: 2_667, resetAt: 1_000 + 999 }), 1_000, undefined, 0, took);
    expect(q.tokens!.capacity).toBe(6_667);
    // A later reading whose reset is rounded up just as much does not make it bigger.
    observe(q, info(null, { limit: 400_000, remaining: 300, resetAt: 3_000 }), 2_000, undefined, 1_000, took);
    expect(q.tokens!.capacity).toBe(6_667);
    expect(available(q.tokens!, 60_000)).toBe(6_667);
  });

  it("before any request was admitted, bounds the bucket by the tightest reset", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 600, remaining: 4, resetAt: 900 }), 0); // a 429's reading: full in 0.9 s at most
    observe(q, info({ limit: 600, remaining: 2, resetAt: 850 }), 100);
    expect(q.requests!.capacity).toBe(9.5);
  });

  it("takes the grants since a reading off after the refill, so a full bucket is never counted twice", () => {
    const q = emptyQuota();
    const took = { requests: 1, tokens: 4_000 };
    observe(q, info(null, { limit: 400_000, remaining: 2_667, resetAt: null }), 0, undefined, 0, took); // holds 6,667
    const mark = { ...q.granted };
    charge(q, 4_000, 900); // granted 900 ms after the reading, when the bucket was full again
    // The reading arrives after that grant: 2,667 + 6,000 refilled, at most 6,667, less the 4,000 since.
    observe(q, info(null, { limit: 400_000, remaining: 2_667, resetAt: null }), 900, mark, 0, took);
    expect(available(q.tokens!, 900)).toBeCloseTo(2_667);
  });

  it("replays the grants made while a slow answer was on its way, each at its own time", () => {
    const q = emptyQuota();
    const took = { requests: 1, tokens: 0 };
    // 600 RPM as a 1 s bucket of 10; a request found it full at 0 and left 9.
    observe(q, info({ limit: 600, remaining: 9, resetAt: null }), 0, undefined, 0, took);
    charge(q, 0, 0); // the request whose 3 s answer comes back below
    const mark = { ...q.granted };
    for (let i = 1; i <= 30; i++) charge(q, 0, i * 100); // one grant every 100 ms: the refill rate
    // Its reading (0 left at 0) comes back at 3 s. The bucket refilled as fast as the grants drew
    // on it, so about nothing is left; taking all 30 off at the end would say 20 short.
    observe(q, info({ limit: 600, remaining: 0, resetAt: null }), 3_000, mark, 0, took);
    expect(available(q.requests!, 3_000)).toBeCloseTo(0, 5);
  });

  it("takes a duration reset (OpenAI's) from when it was parsed: a slow answer does not slow the refill", () => {
    const q = emptyQuota();
    // 10 of 5,000 used, full again in 120 ms as the answer said it; the reading is dated 200 ms before it arrived.
    observe(q, info({ limit: 5_000, remaining: 4_990, resetAt: 1_120 }), 1_000, undefined, 800, { requests: 1, tokens: 0 });
    expect(q.requests!.refillPerMs).toBeCloseTo(5_000 / 60_000);
  });

  it("keeps a window the response did not mention, and assumes a minute's refill without a reset", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 600, remaining: 0, resetAt: null }), 0);
    expect(fitsAt(q, 1, 0)).toBe(100); // 600 per 60 s
    observe(q, info(null, { limit: 10, remaining: 10, resetAt: null }), 0);
    expect(q.requests).not.toBeNull();
  });

  it("a window told with no limit and no reset (Azure) never locks: it refills at least what it held per period", () => {
    // On b88fffb this was Infinity: the key refused every request forever, and persisted it.
    const q = emptyQuota();
    observe(q, info({ limit: null, remaining: 0, resetAt: null }), 0);
    expect(fitsAt(q, 1, 0)).toBe(60_000); // one unit a minute at the least
    const w = emptyQuota();
    observe(w, info({ limit: null, remaining: 40, resetAt: null, periodMs: 10_000 }), 0, { requests: 0, tokens: 0 }, 0, { requests: 1, tokens: 0 });
    for (let i = 0; i < 40; i++) charge(w, 1, 0);
    // It held 41 (40 left after one): 41 per 10 s, so once the 40 are spent the next unit is 10000/41 ms away.
    expect(fitsAt(w, 1, 0)).toBe(Math.ceil(10_000 / 41));
  });
});

describe("a reading of generated tokens alone", () => {
  const out = (remaining: number): RateLimitInfo => ({ retryAfterMs: null, requests: null, tokens: null, output: { limit: 320, remaining, resetAt: null, periodMs: 1_000 } });

  it("takes off the output allowances granted after the reading's request, not their whole costs", () => {
    const q = emptyQuota();
    observe(q, out(320), 0);
    charge(q, 1_000, 0, 16);
    const mark = { ...q.granted };
    charge(q, 1_000, 0, 16);
    charge(q, 1_000, 0, 16);
    // The first request's reading: 304 left after it; the two granted since are owed.
    observe(q, out(304), 0, mark, 0, { requests: 1, tokens: 1_000, output: 16 });
    expect(available(q.output!, 0)).toBe(272);
  });

  it("a 429 whose generated window cannot pay says the quota was short, though the prompt's could", () => {
    const info: RateLimitInfo = { retryAfterMs: 1_000, requests: null, tokens: { limit: 60_000, remaining: 59_000, resetAt: null }, output: { limit: 320, remaining: 4, resetAt: null } };
    expect(roomInReading(info, 28, 16)).toBe("empty");
    expect(roomInReading(info, 28, 4)).toBe("room");
    // Without its output allowance the reading cannot say the window was short for it.
    expect(roomInReading(info, 28)).toBe("room");
  });
});
