import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/observe/emit";
import * as E from "../../src/observe/events";
import { BURST, type Level } from "../../src/observe/log";
import type { RateLimitInfo } from "../../src/policy/types";

const NOW = Date.UTC(2026, 10, 22, 10, 0, 0);
const NO_INFO: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };

const view = (o: Partial<E.SettleView> = {}): E.SettleView => ({
  cls: "success", status: 200, attempt: 1, final: true, latencyMs: 120, info: NO_INFO,
  gateBefore: 0, gateAfter: 0, windowsBefore: { requests: null, tokens: null }, windowsAfter: { requests: null, tokens: null },
  inFlight: 3, queued: 1, limit: 8, ...o,
});
const names = (es: E.LimiterEvent[]) => es.map((e) => e.event);

describe("events from a settle", () => {
  it("a plain success says nothing", () => {
    expect(E.settleEvents(view(), NOW)).toEqual([]);
  });

  it("a 429 with a hint: ratelimit:hit with its figures, gate:closed for how long, request:retrying", () => {
    const info: RateLimitInfo = { retryAfterMs: 2_000, requests: { limit: 500, remaining: 0, resetAt: NOW + 6_000 }, tokens: null };
    const es = E.settleEvents(view({ cls: "rate_limit", status: 429, final: false, info, gateAfter: NOW + 2_000, windowsBefore: { requests: 500, tokens: null }, windowsAfter: { requests: 500, tokens: null } }), NOW);
    expect(names(es)).toEqual(["ratelimit:hit", "gate:closed", "request:retrying"]);
    expect(es[0]!.fields).toEqual({ status: 429, attempt: 1, retryAfterMs: 2_000, requestsRemaining: 0, requestsLimit: 500, tokensRemaining: null, tokensLimit: null, inFlight: 3, limit: 8 });
    expect(es[1]!.fields).toEqual({ forMs: 2_000, hintMs: 2_000, extended: false, status: 429 });
    expect(es[2]!.fields).toEqual({ class: "rate_limit", status: 429, attempt: 1, nextAttempt: 2, retryAfterMs: 2_000, latencyMs: 120 });
  });

  it("a gate already shut logs again only when pushed out by GATE_EXTEND_MS or more", () => {
    const shut = { cls: "rate_limit" as const, status: 429, gateBefore: NOW + 1_000 };
    expect(names(E.settleEvents(view({ ...shut, gateAfter: NOW + 1_000 + E.GATE_EXTEND_MS - 1 }), NOW))).toEqual(["ratelimit:hit"]);
    const ext = E.settleEvents(view({ ...shut, gateAfter: NOW + 1_000 + E.GATE_EXTEND_MS }), NOW);
    expect(names(ext)).toEqual(["ratelimit:hit", "gate:closed"]);
    expect(ext[1]!.fields).toMatchObject({ extended: true, forMs: 1_000 + E.GATE_EXTEND_MS });
    // A gate that was set before but has passed is open: closing it again is a new closure.
    expect(E.settleEvents(view({ ...shut, gateBefore: NOW - 1, gateAfter: NOW + 10 }), NOW)[1]!.fields).toMatchObject({ extended: false });
  });

  it("ratelimit:learned for a window first seen or changed, never for one unchanged", () => {
    const info: RateLimitInfo = { retryAfterMs: null, requests: { limit: 600, remaining: 598, resetAt: NOW + 200 }, tokens: { limit: 9e4, remaining: 1, resetAt: null } };
    const first = E.settleEvents(view({ info, windowsAfter: { requests: 500, tokens: 9e4 } }), NOW);
    expect(first.map((e) => e.fields)).toEqual([
      { window: "requests", limit: 500, previous: null, remaining: 598, resetInMs: 200 },
      { window: "tokens", limit: 9e4, previous: null, remaining: 1, resetInMs: null },
    ]);
    const changed = E.settleEvents(view({ info, windowsBefore: { requests: 500, tokens: 9e4 }, windowsAfter: { requests: 600, tokens: 9e4 } }), NOW);
    expect(changed.map((e) => [e.event, e.fields.window, e.fields.previous])).toEqual([["ratelimit:learned", "requests", 500]]);
  });

  it("request:retrying for any attempt the gateway will try again, never for a final one", () => {
    expect(names(E.settleEvents(view({ cls: "transient", status: 503, final: false }), NOW))).toEqual(["request:retrying"]);
    expect(names(E.settleEvents(view({ cls: "transient", status: 503, final: true }), NOW))).toEqual([]);
    expect(names(E.settleEvents(view({ cls: "rate_limit", status: 429, final: true }), NOW))).toEqual(["ratelimit:hit"]);
  });

  it("limit changes say up or down, with the reason", () => {
    expect(E.limitChanged({ from: 8, to: 4, reason: "rate_limit" }, 7)).toEqual({ event: "concurrency:decreased", fields: { from: 8, to: 4, reason: "rate_limit", inFlight: 7 } });
    expect(E.limitChanged({ from: 4, to: 8, reason: "slow_start" }, 4).event).toBe("concurrency:increased");
  });
});

describe("event lines", () => {
  it("one JSON line: event, level, time, key, figures, and the dropped count when there is one", () => {
    const e = E.queueTimeout({ how: "expired", waitedMs: 1234.6, retryAfterMs: 1000, queued: 2, inFlight: 4, limit: 4 });
    const line = E.formatLine(e, "openai:gpt-4o-mini:0123456789abcdef", NOW, 0);
    expect(line).not.toContain("\n");
    expect(JSON.parse(line)).toEqual({
      event: "queue:timeout", level: "warn", at: "2026-11-22T10:00:00.000Z", key: "openai:gpt-4o-mini:0123456789abcdef",
      how: "expired", waitedMs: 1235, retryAfterMs: 1000, queued: 2, inFlight: 4, limit: 4,
    });
    expect(JSON.parse(E.formatLine(e, "k", NOW, 7)).suppressed).toBe(7);
  });

  it("every event has a level", () => {
    const all = [
      E.leaseExpired({ id: "req:1", cost: 10, expiresAt: NOW - 5 }, 0, NOW),
      E.restored({ limit: 4, phase: "steady", leases: 1, windows: { requests: 1, tokens: null }, gateUntil: 0, history: 2, samples: 3 }, NOW),
      E.resetDone(4),
      E.slotGranted({ waitedMs: 3, inFlight: 1, limit: 4, queued: 0 }),
      E.gatewayErrorEvent("limiter_unavailable", 503, 0),
    ];
    for (const e of all) expect(["error", "warn", "info", "debug"]).toContain(E.EVENT_LEVEL[e.event]);
    expect(all[0]!.fields).toEqual({ leaseId: "req:1", cost: 10, overdueMs: 5, inFlight: 0 });
    expect(all[1]!.fields.gateMs).toBe(0);
  });
});

describe("EventLog", () => {
  const capture = (level: Level) => {
    const lines: [Level, string][] = [];
    return { lines, log: new EventLog(level, (l, s) => void lines.push([l, s]), NOW) };
  };
  const hit = E.settleEvents(view({ cls: "rate_limit", status: 429 }), NOW);
  const learned = E.settleEvents(view({ windowsAfter: { requests: 5, tokens: null } }), NOW);
  const granted = [E.slotGranted({ waitedMs: 0, inFlight: 1, limit: 4, queued: 0 })];

  it("LOG_LEVEL filters by the event's level", () => {
    const seen = (["error", "warn", "info", "debug"] as const).map((lvl) => {
      const { lines, log } = capture(lvl);
      log.emit("k", [...hit, ...learned, ...granted], NOW);
      return lines.map(([l, s]) => `${l}:${JSON.parse(s).event}`);
    });
    expect(seen).toEqual([[], ["warn:ratelimit:hit"], ["warn:ratelimit:hit", "info:ratelimit:learned"], ["warn:ratelimit:hit", "info:ratelimit:learned", "debug:slot:granted"]]);
  });

  it("filtered lines take nothing from the rate bound; a storm writes BURST lines then reports the hole", () => {
    const { lines, log } = capture("warn");
    for (let i = 0; i < 1_000; i++) log.emit("k", learned, NOW); // info: filtered out
    for (let i = 0; i < BURST + 25; i++) log.emit("k", hit, NOW);
    expect(lines).toHaveLength(BURST);
    expect(log.budget.droppedTotal).toBe(25);
    log.emit("k", hit, NOW + 1_000);
    expect(JSON.parse(lines.at(-1)![1]).suppressed).toBe(25);
  });
});
