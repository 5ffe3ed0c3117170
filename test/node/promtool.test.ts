// The pure renderer's output through Prometheus's own parser and linter, for cases traffic does
// not easily make: no keys, awkward label values, every counter and bucket non-zero, many keys.
import { describe, expect, it } from "vitest";
import { countAttempt, countGrant, countLeasesExpired, countLimitChange, countQueueTimeout, emptyCounters } from "../../src/limiter/counters.ts";
import { type KeySeries, render } from "../../src/observe/prometheus.ts";
import { checkMetrics } from "../support/promtool.ts";

const SCRAPE = { known: 2, omitted: 0, unanswered: 0, durationSeconds: 0.25 };

function busy(key: string, model = key.split(":")[1]!): KeySeries {
  const c = emptyCounters();
  for (const cls of ["success", "rate_limit", "hard_quota", "transient", "fatal"] as const)
    for (const ms of [1, 80, 400, 3_000, 200_000]) countAttempt(c, { cls, final: ms > 100, latencyMs: ms });
  for (const ms of [0, 20, 900, 400_000]) countGrant(c, ms);
  countQueueTimeout(c);
  for (const r of ["slow_start", "steady_up", "rate_limit", "quota", "manual"] as const) countLimitChange(c, r);
  countLeasesExpired(c, 2);
  return {
    key, provider: "openai", model, lastSeen: Date.now(), limit: 12, inFlight: 7, queued: 40, gateSeconds: 2.5, logLinesDropped: 9,
    quotas: { requests: { limit: 500, remaining: 3 }, tokens: { limit: null, remaining: 12_000 } }, counters: c,
  };
}

describe("promtool check metrics", () => {
  it("accepts an exposition with no keys", () => {
    expect(checkMetrics(render([], SCRAPE))).toEqual({ status: 0, output: "" });
  });

  it("accepts busy keys with awkward models and every series non-zero", () => {
    const keys = [busy("openai:gpt-4o-mini:0123456789abcdef"), busy('x:we"ird\\model\nname:00000000000000ff'), busy("anthropic:*:aaaaaaaaaaaaaaaa")];
    expect(checkMetrics(render(keys, SCRAPE))).toEqual({ status: 0, output: "" });
  });

  it("accepts 1,000 keys", () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => busy(`openai:m-${i}:${i.toString(16).padStart(16, "0")}`));
    expect(checkMetrics(render(keys, SCRAPE))).toEqual({ status: 0, output: "" });
  });

  it("refuses what is wrong (so the checks above can fail)", () => {
    const good = render([busy("openai:m:0000000000000001")], SCRAPE);
    expect(checkMetrics(good.replace("# TYPE slotgate_requests_total counter", "# TYPE slotgate_requests_total gauge")).status).not.toBe(0);
    expect(checkMetrics(good.replace('model="m"', 'model="m')).status).not.toBe(0);
  });
});
