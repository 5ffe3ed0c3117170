import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { LimiterCore, type Outcome } from "../../src/limiter/core";
import { Telemetry } from "../../src/limiter/telemetry";
import { EventLog } from "../../src/observe/emit";
import type { Level } from "../../src/observe/log";

const T0 = 1_795_000_000_000;
const KEY = "openai:gpt-4o-mini:0123456789abcdef";

function setup(level: Level = "debug") {
  const core = new LimiterCore({ ...DEFAULT_LIMITER, startConcurrency: 8 });
  core.settle("seed", ok, T0); // a key that has had an answer (a new one sends its first request alone)
  const lines: Record<string, unknown>[] = [];
  const log = new EventLog(level, (_l, s) => void lines.push(JSON.parse(s)), T0);
  const t = new Telemetry(core, log, () => KEY, {}, T0);
  const grant = (id: string, now = T0) => {
    core.enqueue({ id, cost: 10, retry: false, deadline: now + 10_000, enqueuedAt: now }, now);
    for (const w of core.pump(now).granted) t.granted(now - w.enqueuedAt, now);
  };
  const settle = (id: string, o: Outcome, now = T0) => t.settle(id, o, now, () => core.settle(id, o, now));
  return { core, t, lines, grant, settle, events: () => lines.map((l) => l.event) };
}

const ok: Outcome = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 80, attempt: 1, final: true };
const unexplained: Outcome = { ...ok, cls: "rate_limit", status: 429, final: false, info: { retryAfterMs: 3_000, requests: null, tokens: null } };
const limited: Outcome = {
  cls: "rate_limit", status: 429, latencyMs: 20, attempt: 1, final: false,
  info: { retryAfterMs: 3_000, requests: { limit: 600, remaining: 0, resetAt: T0 + 6_000 }, tokens: null },
};

describe("telemetry around the core", () => {
  it("a 429 with an empty window counts once, shuts the gate, learns the window, and says all of it", () => {
    const { t, core, grant, settle, events, lines } = setup();
    for (let i = 0; i < 8; i++) grant(`r${i}`);
    settle("r0", limited);
    expect(core.aimd.limit).toBe(8); // quotas pace; they do not cut
    expect(events()).toEqual([...new Array(8).fill("slot:granted"), "ratelimit:hit", "ratelimit:learned", "gate:closed", "request:retrying"]);
    expect(lines.find((l) => l.event === "gate:closed")).toMatchObject({ forMs: 3_000, hintMs: 3_000 });
    // The same settle again (the Worker retried its call): the core ignores it, and so do the counters.
    settle("r0", limited);
    expect(t.counters.attempts.rate_limit).toBe(1);
    expect(t.counters.retries.rate_limit).toBe(1);
    expect(t.counters.limitChanges.rate_limit).toBe(0);
    expect(lines).toHaveLength(12);
    expect(t.ring.buckets[0]).toMatchObject({ rateLimited: 1, inFlightMax: 8, limit: 8 });
  });

  it("a 429 with no quota information cuts to just under the level it was refused at, and says so", () => {
    const { t, core, grant, settle, lines } = setup();
    for (let i = 0; i < 8; i++) grant(`r${i}`);
    settle("r5", unexplained); // granted sixth: the provider refused at 6 in flight
    expect(core.aimd.limit).toBe(5);
    expect(lines.at(-1)).toMatchObject({ event: "concurrency:decreased", key: KEY, from: 8, to: 5, reason: "rate_limit", inFlight: 8 });
    expect(t.counters.limitChanges.rate_limit).toBe(1);
  });

  it("counts grants with their wait, and manual limit changes through configure", () => {
    const { t, core, grant, events } = setup("info");
    grant("a");
    expect(t.counters.queueWait.count).toBe(1);
    const err = t.configure(T0, () => core.configure({ limit: 20 }, T0, () => null));
    expect(err).toBeNull();
    expect(t.counters.limitChanges.manual).toBe(1);
    expect(events()).toEqual(["concurrency:increased"]); // slot:granted is debug: not at info
    t.configure(T0, () => core.configure({ maxConcurrency: 10 }, T0, () => null)); // the limit is clamped into the new bounds
    expect(events()).toEqual(["concurrency:increased", "concurrency:decreased"]);
    expect(t.counters.limitChanges.manual).toBe(2);
  });

  it("slow-start growth shows as concurrency:increased with its reason", () => {
    const { grant, settle, lines } = setup("info");
    for (let i = 0; i < 8; i++) grant(`g${i}`);
    for (let i = 0; i < 8; i++) settle(`g${i}`, ok);
    // A slot per used success (the history merges the steps; the log shows each one).
    expect(lines.map((l) => [l.event, l.from, l.to, l.reason])).toEqual([
      ["concurrency:increased", 8, 9, "slow_start"],
      ["concurrency:increased", 9, 10, "slow_start"],
      ["concurrency:increased", 10, 11, "slow_start"],
    ]);
  });

  it("time-outs, expiries and reset are counted and logged; metrics() reads the gauges", () => {
    const { t, core, grant, settle, events } = setup("info");
    grant("a");
    t.timedOut("expired", 5_000, 1_000, T0);
    t.expired([{ id: "a", cost: 10, expiresAt: T0 - 1 }], T0);
    t.expired([], T0);
    expect(t.counters.gatewayErrors.queue_timeout).toBe(1);
    expect(t.counters.leasesExpired).toBe(1);
    settle("b", limited);
    const m = t.metrics(T0 + 1_000);
    expect(m).toMatchObject({ limit: core.aimd.limit, inFlight: 1, queued: 0, gateSeconds: 2, quotas: { requests: { limit: 600, remaining: 10 }, tokens: null } });
    t.reset(T0 + 2_000);
    expect(t.counters.attempts.rate_limit).toBe(0);
    expect(t.ring.buckets).toHaveLength(1);
    expect(events()).toEqual(["queue:timeout", "lease:expired", "ratelimit:hit", "ratelimit:learned", "gate:closed", "request:retrying", "limiter:reset"]);
  });

  it("the provider's rate in the ring is the requests window's refill, per second", () => {
    const { t, grant, settle } = setup();
    grant("x");
    settle("x", { ...ok, info: { retryAfterMs: null, requests: { limit: 600, remaining: 590, resetAt: T0 + 1_000 }, tokens: null } });
    expect(t.levels().rate).toBe(10); // 600 a minute, the most the model lets a window refill
  });
});
