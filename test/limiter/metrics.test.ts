import { describe, expect, it } from "vitest";
import { LATENCY_WINDOW, emptyMetrics, meanLatencyMs, record, summarize } from "../../src/limiter/metrics";

describe("metrics", () => {
  it("counts requests, retries, completions, failures and rate-limit hits", () => {
    const m = emptyMetrics();
    record(m, { cls: "rate_limit", attempt: 1, final: false, latencyMs: 10 });
    record(m, { cls: "success", attempt: 2, final: true, latencyMs: 20 });
    record(m, { cls: "hard_quota", attempt: 1, final: true, latencyMs: 30 });
    record(m, { cls: "transient", attempt: 1, final: false, latencyMs: 40 });
    expect(summarize(m)).toEqual({
      totalRequests: 3, completedRequests: 1, failedRequests: 1, rateLimitHits: 1, retriedRequests: 1,
      avgLatencyMs: 25, p50LatencyMs: 20, p99LatencyMs: 40,
    });
  });

  it("computes percentiles over the last window only", () => {
    const m = emptyMetrics();
    for (let i = 0; i < LATENCY_WINDOW; i++) record(m, { cls: "success", attempt: 1, final: true, latencyMs: 1_000 });
    for (let i = 1; i <= LATENCY_WINDOW; i++) record(m, { cls: "success", attempt: 1, final: true, latencyMs: i });
    const s = summarize(m);
    expect(s.p50LatencyMs).toBe(LATENCY_WINDOW / 2);
    expect(s.p99LatencyMs).toBe(Math.ceil(LATENCY_WINDOW * 0.99));
    expect(m.latencies).toHaveLength(LATENCY_WINDOW);
  });

  it("ignores latencies that are not finite and non-negative", () => {
    const m = emptyMetrics();
    record(m, { cls: "success", attempt: 1, final: true, latencyMs: Number.NaN });
    record(m, { cls: "success", attempt: 1, final: true, latencyMs: -5 });
    expect(summarize(m).avgLatencyMs).toBe(0);
    expect(m.completedRequests).toBe(2);
  });

  it("has no mean latency before an answer, then the mean of every answer's (what a caller's retry advice uses)", () => {
    const m = emptyMetrics();
    expect(meanLatencyMs(m)).toBeNull();
    record(m, { cls: "success", attempt: 1, final: true, latencyMs: 100 });
    record(m, { cls: "success", attempt: 1, final: true, latencyMs: 251 });
    expect(meanLatencyMs(m)).toBe(175.5);
    expect(summarize(m).avgLatencyMs).toBe(176);
  });
});
