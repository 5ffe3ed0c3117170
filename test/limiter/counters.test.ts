import { describe, expect, it } from "vitest";
import {
  countAttempt, countGrant, countLeasesExpired, countLimitChange, countQueueTimeout, cumulative, emptyCounters, LATENCY_BOUNDS, restoreCounters, WAIT_BOUNDS,
} from "../../src/limiter/counters";

describe("counters", () => {
  it("a request counts once, by its final attempt's class; every attempt counts; a non-final one is a retry", () => {
    const c = emptyCounters();
    countAttempt(c, { cls: "rate_limit", final: false, latencyMs: 10 });
    countAttempt(c, { cls: "transient", final: false, latencyMs: 10 });
    countAttempt(c, { cls: "success", final: true, latencyMs: 10 });
    countAttempt(c, { cls: "hard_quota", final: true, latencyMs: 10 });
    countAttempt(c, { cls: "rate_limit", final: true, latencyMs: 10 });
    countAttempt(c, { cls: "capacity", final: false, latencyMs: 10 });
    countAttempt(c, { cls: "too_large", final: true, latencyMs: 10 });
    expect(c.requests).toEqual({ success: 1, rate_limit: 1, capacity: 0, hard_quota: 1, transient: 0, too_large: 1, fatal: 0 });
    expect(c.attempts).toEqual({ success: 1, rate_limit: 2, capacity: 1, hard_quota: 1, transient: 1, too_large: 1, fatal: 0 });
    expect(c.retries).toEqual({ rate_limit: 1, capacity: 1, transient: 1 });
  });

  it("histograms put a value in the first bucket whose bound it does not exceed, in seconds", () => {
    const c = emptyCounters();
    for (const ms of [0, 50, 51, 120_000, 120_001]) countAttempt(c, { cls: "success", final: true, latencyMs: ms });
    countAttempt(c, { cls: "success", final: true, latencyMs: Number.NaN });
    countAttempt(c, { cls: "success", final: true, latencyMs: -1 });
    expect(c.latency.counts).toHaveLength(LATENCY_BOUNDS.length + 1);
    expect(c.latency.counts[0]).toBe(2); // 0 and exactly 0.05 s
    expect(c.latency.counts[1]).toBe(1);
    expect(c.latency.counts[LATENCY_BOUNDS.length - 1]).toBe(1); // exactly 120 s
    expect(c.latency.counts[LATENCY_BOUNDS.length]).toBe(1); // +Inf
    expect(c.latency.count).toBe(5); // NaN and negative are not observed
    expect(c.latency.sum).toBeCloseTo(240.102, 6);
    expect(cumulative(c.latency).at(-1)).toBe(5);
    countGrant(c, 0);
    countGrant(c, 5_000);
    expect(c.queueWait.counts[0]).toBe(1);
    expect(c.queueWait.counts[WAIT_BOUNDS.indexOf(5)]).toBe(1);
  });

  it("counts time-outs, limit changes and expiries", () => {
    const c = emptyCounters();
    countQueueTimeout(c);
    countLimitChange(c, "quota");
    countLimitChange(c, "quota");
    countLeasesExpired(c, 3);
    expect([c.gatewayErrors.queue_timeout, c.limitChanges.quota, c.limitChanges.manual, c.leasesExpired]).toEqual([1, 2, 0, 3]);
  });

  it("restores a stored row leniently: missing fields at zero, garbage at zero, another bucket layout starts over", () => {
    const c = emptyCounters();
    countAttempt(c, { cls: "success", final: true, latencyMs: 200 });
    countLimitChange(c, "slow_start");
    expect(restoreCounters(JSON.parse(JSON.stringify(c)))).toEqual(c);
    const old = { requests: { success: 4, bogus: 9 }, attempts: "x", latency: { counts: [1, 2], sum: 3, count: 3 }, leasesExpired: -2 };
    const r = restoreCounters(old);
    expect(r.requests.success).toBe(4);
    expect(r.requests).not.toHaveProperty("bogus");
    expect(r.attempts).toEqual(emptyCounters().attempts);
    expect(r.latency).toEqual(emptyCounters().latency);
    expect(r.leasesExpired).toBe(0);
    expect(restoreCounters(null)).toEqual(emptyCounters());
  });
});
