import { describe, expect, it } from "vitest";
import { METRIC_GEN_AI_CLIENT_OPERATION_DURATION, METRIC_GEN_AI_CLIENT_TOKEN_USAGE } from "@opentelemetry/semantic-conventions/incubating";
import { CHANGE_REASONS, countAttempt, countOperation, GENAI_SERIES_MAX, restoreCounters, countGrant, countLimitChange, countQueueTimeout, emptyCounters, LATENCY_BOUNDS, OUTCOME_CLASSES, WAIT_BOUNDS, RETRY_CLASSES } from "../../src/limiter/counters";
import { escapeLabel, formatValue, type KeySeries, keyHash, render, type ScrapeInfo } from "../../src/observe/prometheus";
import { parseExposition, value } from "../support/exposition";

const SCRAPE: ScrapeInfo = { known: 3, omitted: 1, unanswered: 0, durationSeconds: 0.012 };

function series(key: string, o: Partial<KeySeries> = {}): KeySeries {
  const [provider, model] = key.split(":") as [string, string];
  return {
    key, provider, model, lastSeen: 1_795_000_000_000, limit: 8, inFlight: 3, queued: 2, gateSeconds: 0, logLinesDropped: 0,
    quotas: { requests: { limit: 500, remaining: 120 }, tokens: null }, counters: emptyCounters(), ...o,
  };
}

describe("Prometheus exposition", () => {
  it("parses, one family each, with HELP and TYPE, every name slotgate_ (or OpenTelemetry's gen_ai_) and every counter _total", () => {
    const fams = parseExposition(render([series("openai:gpt-4o-mini:0123456789abcdef")], SCRAPE));
    for (const f of fams) {
      expect(f.name).toMatch(/^(slotgate|gen_ai_client)_[a-z_]+$/);
      expect(f.help.length).toBeGreaterThan(10);
      if (f.type === "counter") expect(f.name).toMatch(/_total$/);
      else expect(f.name).not.toMatch(/_total$/);
      // Token counts are no durations: OpenTelemetry's gen_ai.client.token.usage has no unit suffix.
      if (f.type === "histogram" && f.name !== "gen_ai_client_token_usage") expect(f.name).toMatch(/_seconds$/);
    }
    expect(new Set(fams.map((f) => f.name)).size).toBe(fams.length);
  });

  it("carries the key's numbers under provider, model and key_hash labels", () => {
    const c = emptyCounters();
    for (const [cls, final, ms] of [["success", true, 40], ["rate_limit", false, 30], ["success", true, 700], ["transient", true, 20_000]] as const)
      countAttempt(c, { cls, final, latencyMs: ms });
    countGrant(c, 0);
    countGrant(c, 2_000);
    countQueueTimeout(c);
    countLimitChange(c, "rate_limit");
    const fams = parseExposition(render([series("openai:gpt-4o-mini:0123456789abcdef", { counters: c, gateSeconds: 1.5 })], SCRAPE));
    const k = { provider: "openai", model: "gpt-4o-mini", key_hash: "0123456789abcdef" };
    expect(value(fams, "slotgate_concurrency_limit", k)).toBe(8);
    expect(value(fams, "slotgate_requests_in_flight", k)).toBe(3);
    expect(value(fams, "slotgate_requests_queued", k)).toBe(2);
    expect(value(fams, "slotgate_send_gate_seconds", k)).toBe(1.5);
    expect(value(fams, "slotgate_quota_limit", { ...k, window: "requests" })).toBe(500);
    expect(value(fams, "slotgate_quota_remaining", { ...k, window: "requests" })).toBe(120);
    expect(() => value(fams, "slotgate_quota_limit", { window: "tokens" })).toThrow(/0 samples/); // never reported: no series
    expect(() => value(fams, "slotgate_quota_limit", { window: "output" })).toThrow(/0 samples/);
    // A key whose provider tells generated tokens apart (Fireworks') has a third window.
    const fw = { provider: "fireworks", model: "m", key_hash: "fedcba9876543210" };
    const three = parseExposition(render([series("fireworks:m:fedcba9876543210", { quotas: { requests: null, tokens: { limit: 60_000, remaining: 59_000 }, output: { limit: 320, remaining: 40 } } })], SCRAPE));
    expect(value(three, "slotgate_quota_limit", { ...fw, window: "output" })).toBe(320);
    expect(value(three, "slotgate_quota_remaining", { ...fw, window: "output" })).toBe(40);
    expect(value(three, "slotgate_quota_remaining", { ...fw, window: "tokens" })).toBe(59_000);
    expect(value(fams, "slotgate_requests_total", { ...k, class: "success" })).toBe(2);
    expect(value(fams, "slotgate_requests_total", { ...k, class: "rate_limit" })).toBe(0);
    expect(value(fams, "slotgate_requests_total", { ...k, class: "transient" })).toBe(1);
    expect(value(fams, "slotgate_upstream_attempts_total", { ...k, class: "rate_limit" })).toBe(1);
    expect(value(fams, "slotgate_retries_total", { ...k, class: "rate_limit" })).toBe(1);
    expect(value(fams, "slotgate_rate_limits_absorbed_total", k)).toBe(1);
    expect(value(fams, "slotgate_gateway_errors_total", { ...k, type: "queue_timeout" })).toBe(1);
    expect(value(fams, "slotgate_limit_changes_total", { ...k, reason: "rate_limit" })).toBe(1);
    expect(value(fams, "slotgate_key_last_seen_timestamp_seconds", k)).toBe(1_795_000_000);
    // Histograms: cumulative buckets in seconds, +Inf equal to _count, _sum in seconds.
    expect(value(fams, "slotgate_upstream_latency_seconds_count", k)).toBe(4);
    expect(value(fams, "slotgate_upstream_latency_seconds_sum", k)).toBeCloseTo(20.77, 6);
    expect(value(fams, "slotgate_upstream_latency_seconds_bucket", { ...k, le: "0.05" })).toBe(2);
    expect(value(fams, "slotgate_upstream_latency_seconds_bucket", { ...k, le: "1" })).toBe(3);
    expect(value(fams, "slotgate_upstream_latency_seconds_bucket", { ...k, le: "10" })).toBe(3);
    expect(value(fams, "slotgate_upstream_latency_seconds_bucket", { ...k, le: "30" })).toBe(4);
    expect(value(fams, "slotgate_queue_wait_seconds_bucket", { ...k, le: "0.001" })).toBe(1);
    expect(value(fams, "slotgate_queue_wait_seconds_bucket", { ...k, le: "+Inf" })).toBe(2);
    expect(value(fams, "slotgate_keys")).toBe(3);
    expect(value(fams, "slotgate_keys_exported")).toBe(1);
    expect(value(fams, "slotgate_keys_omitted")).toBe(1);
  });

  it("renders OpenTelemetry's gen_ai.client.* histograms as Prometheus names them, per operation, model and token type", () => {
    // The conventions' metric names, dots to underscores, and the duration's unit (s) as _seconds.
    const prom = (otel: string) => otel.replaceAll(".", "_");
    expect(prom(METRIC_GEN_AI_CLIENT_TOKEN_USAGE)).toBe("gen_ai_client_token_usage");
    expect(`${prom(METRIC_GEN_AI_CLIENT_OPERATION_DURATION)}_seconds`).toBe("gen_ai_client_operation_duration_seconds");
    const c = emptyCounters();
    countOperation(c, { op: "chat", model: "gpt-4o-mini", ms: 300 }, { input: 12, output: 5, cached: 0, cacheWrite: 0 });
    countOperation(c, { op: "chat", model: "gpt-4o-mini", ms: 2_000 }, { input: 900, output: 40, cached: 0, cacheWrite: 0 });
    countOperation(c, { op: "chat", model: "gpt-4o-mini", ms: 50, error: "429" }, null);
    // Through the object's storage and back: what a restarted object renders.
    const fams = parseExposition(render([series("openai:gpt-4o-mini:0123456789abcdef", { counters: restoreCounters(JSON.parse(JSON.stringify(c))) })], SCRAPE));
    const g = { provider: "openai", model: "gpt-4o-mini", key_hash: "0123456789abcdef", gen_ai_operation_name: "chat", gen_ai_provider_name: "openai", gen_ai_request_model: "gpt-4o-mini" };
    expect(value(fams, "gen_ai_client_token_usage_count", { ...g, gen_ai_token_type: "input" })).toBe(2);
    expect(value(fams, "gen_ai_client_token_usage_sum", { ...g, gen_ai_token_type: "input" })).toBe(912);
    expect(value(fams, "gen_ai_client_token_usage_sum", { ...g, gen_ai_token_type: "output" })).toBe(45);
    expect(value(fams, "gen_ai_client_token_usage_bucket", { ...g, gen_ai_token_type: "input", le: "16" })).toBe(1);
    expect(value(fams, "gen_ai_client_token_usage_bucket", { ...g, gen_ai_token_type: "input", le: "1024" })).toBe(2);
    // Successes carry no error_type label at all.
    const ok = (name: string) => fams.flatMap((f) => f.samples).filter((s) => s.name === name && s.labels.gen_ai_request_model === "gpt-4o-mini" && !("error_type" in s.labels));
    expect(ok("gen_ai_client_operation_duration_seconds_count").map((s) => s.value)).toEqual([2]);
    expect(ok("gen_ai_client_operation_duration_seconds_sum")[0]!.value).toBeCloseTo(2.3, 6);
    expect(ok("gen_ai_client_operation_duration_seconds_bucket").find((s) => s.labels.le === "0.32")!.value).toBe(1);
    expect(value(fams, "gen_ai_client_operation_duration_seconds_count", { ...g, error_type: "429" })).toBe(1);
    const types = fams.find((f) => f.name === "gen_ai_client_operation_duration_seconds")!;
    expect(types.type).toBe("histogram");
  });

  it("a key's gen_ai label sets are bounded: past the cap, new models count as _OTHER", () => {
    const c = emptyCounters();
    for (let i = 0; i < GENAI_SERIES_MAX + 10; i++) countOperation(c, { op: "chat", model: `m${i}`, ms: 10 }, null);
    expect(Object.keys(c.genai.duration)).toHaveLength(GENAI_SERIES_MAX + 1);
    expect(c.genai.duration["chat\n_OTHER\n"]!.count).toBe(10);
  });

  it("every key has the same fixed number of series: the label set grows only with the keys", () => {
    const count = (n: number) => {
      const keys = Array.from({ length: n }, (_, i) => series(`openai:m${i}:${i.toString(16).padStart(16, "0")}`));
      return parseExposition(render(keys, SCRAPE)).reduce((sum, f) => sum + f.samples.length, 0);
    };
    const base = count(0);
    const perKey = count(1) - base;
    // 5 gauges, 2 for the one known quota window, the labelled counters, the calls and ops counters,
    // 4 token directions and the cost, and the histograms; nothing per request.
    const expected = 5 + 2 + 2 * OUTCOME_CLASSES.length + RETRY_CLASSES.length + 1 + 1 + CHANGE_REASONS.length + 2 + 2 + 4 + 1 + (LATENCY_BOUNDS.length + 3) + (WAIT_BOUNDS.length + 3);
    expect(perKey).toBe(expected);
    expect(count(50) - base).toBe(50 * perKey);
    expect(base).toBe(5);
  });

  it("escapes label values; the key hash is the part after the last colon", () => {
    const odd = series('openai:we"ird\\mo\ndel:00000000000000ff');
    const fams = parseExposition(render([odd], SCRAPE));
    expect(fams[0]!.samples[0]!.labels).toEqual({ provider: "openai", model: 'we"ird\\mo\ndel', key_hash: "00000000000000ff" });
    expect(escapeLabel('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd');
    expect(keyHash("openai:gpt-4o:abc")).toBe("abc");
  });

  it("formats special values as the format spells them", () => {
    expect([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.25, 3].map(formatValue)).toEqual(["NaN", "+Inf", "-Inf", "0.25", "3"]);
  });

  it("the test parser refuses what the format refuses (so the tests above can fail)", () => {
    const good = render([series("openai:m:0000000000000001")], SCRAPE);
    expect(() => parseExposition(good.replace("slotgate_requests_queued{", "slotgate requests_queued{"))).toThrow();
    expect(() => parseExposition(good.replace(/le="\+Inf"\} \d+/, 'le="+Inf"} 99'))).toThrow(/differs from _count/);
    expect(() => parseExposition(`${good}slotgate_concurrency_limit 1\n`)).toThrow();
    expect(() => parseExposition(good.slice(0, -1))).toThrow(/newline/);
  });
});
