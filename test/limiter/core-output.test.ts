// LimiterCore on a key whose provider limits generated tokens apart (Fireworks' Generated TPM):
// grants, tickets and refusals read that window with each request's output allowance.
import { describe, expect, it } from "vitest";
import { LimiterCore } from "../../src/limiter/core";
import { available } from "../../src/limiter/quota";
import { snapshot } from "../../src/limiter/snapshot";
import type { RateLimitInfo } from "../../src/policy/types";
import { cfg, open, out, w } from "../support/opened-core";

/** Prompt tokens 60,000 a second (plenty), generated 320 a second: each a 1 s bucket told with its limit, no reset (Fireworks sends none). */
const fireworks = (generated: number, retryAfterMs: number | null = null): RateLimitInfo => ({
  retryAfterMs, requests: null,
  tokens: { limit: 60_000, remaining: 60_000, resetAt: null, periodMs: 1_000 },
  output: { limit: 320, remaining: generated, resetAt: null, periodMs: 1_000 },
});
/** 12 prompt tokens and max_tokens 16, as the providers bench sends (the prompt's cost and the output's apart: policy/estimate.ts costOf). */
const ask = (id: string) => w(id, { cost: 12, out: 16 });

/** An open key whose one request at 1,000 (its bucket 320 when it went) left `generated` of the window. */
function leftWith(generated: number): LimiterCore {
  const core = open(fireworks(320));
  core.enqueue(ask("x"), 1_000);
  core.pump(1_000);
  core.settle("x", out({ info: fireworks(generated) }), 1_000);
  core.release("x", 1_000);
  return core;
}

describe("LimiterCore with a window of generated tokens", () => {
  it("grants what the generated window can pay for, then one a refill of 16 at a time, though the prompt's has plenty", () => {
    const core = open(fireworks(320));
    for (let i = 0; i < 30; i++) core.enqueue(ask(`r${i}`), 1_000);
    // 320 of 16 each: 20 go now (the limit of 16 slots raised to the pace the window needs, or held by it).
    const first = core.pump(1_000).granted.length;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(20);
    expect(available(core.quota.output!, 1_000)).toBeCloseTo(320 - 16 * first, 6);
    // The rest of the 320 go once slots free; then each waits for the window: 16 tokens at 0.32 a
    // ms, about 50 ms, where the prompt's window alone would take half a millisecond.
    for (let i = 0; i < first; i++) core.release(`r${i}`, 1_000);
    const more = core.pump(1_000).granted.length;
    expect(first + more).toBeGreaterThanOrEqual(19);
    expect(first + more).toBeLessThanOrEqual(20);
    expect(core.pump(1_010).granted).toHaveLength(0);
    const at = core.wakeAt(1_010)!;
    expect(at).toBeGreaterThan(1_010);
    expect(at).toBeLessThanOrEqual(1_000 + 60);
  });

  it("the same key without output allowances on its requests is paced by the prompt's window alone (a row that reads no such window sends none)", () => {
    const core = open(fireworks(0));
    for (let i = 0; i < 16; i++) core.enqueue(w(`r${i}`, { cost: 12 }), 1_000);
    expect(core.pump(1_000).granted).toHaveLength(16);
  });

  it("a 429 whose reading shows the generated window spent holds every caller for its hint and cuts nothing", () => {
    const core = open(fireworks(320));
    core.enqueue(ask("a:1"), 1_000);
    core.pump(1_000);
    const limit = core.aimd.limit;
    core.settle("a:1", { cls: "rate_limit", status: 429, info: fireworks(3, 1_000), latencyMs: 20, attempt: 1, final: true }, 1_020);
    expect(core.cooldownUntil).toBe(1_020 + 1_000);
    expect(core.aimd.limit).toBe(limit);
  });

  it("tickets reserve their output allowance, stay within their share of the generated window, and a use is charged it", () => {
    const core = leftWith(64);
    // 64 generated tokens left: half is 32, two tickets of 16.
    const ids = core.issue({ want: 8, cost: 12, out: 16 }, 1_000);
    expect(ids).toHaveLength(2);
    expect(core.tickets.reserved).toEqual({ requests: 2, tokens: 24, output: 32 });
    const before = available(core.quota.output!, 1_000);
    expect(core.useTicket(ids[0]!, 12, 1_000, undefined, undefined, 10)).toBe(true);
    expect(available(core.quota.output!, 1_000)).toBeCloseTo(before - 10, 6);
    expect(core.tickets.reserved).toEqual({ requests: 1, tokens: 12, output: 16 });
    // A lapsed ticket is charged what it reserved.
    core.pump(1_000 + 2_000);
    expect(core.tickets.reserved.output).toBe(0);
    expect(core.quota.granted.output).toBe(16 + 10 + 16);
  });

  it("a pool's member view and a refusal's retry-after count the generated window (a member with a spent one is not free)", () => {
    const core = leftWith(0);
    // Spent: 16 more generated tokens are 50 ms away; the prompt's window alone would say now.
    expect(core.view(12, 1_000, 16).waitMs).toBeGreaterThanOrEqual(40);
    expect(core.view(12, 1_000).waitMs).toBe(0);
    expect(core.retryAfter(12, 1_000, { out: 16 })).toBeGreaterThanOrEqual(core.retryAfter(12, 1_000));
  });

  it("the admin view lists the generated window beside the others, and only on a key that has one", () => {
    const withOutput = open(fireworks(320));
    expect(snapshot(withOutput, null, null, 1_000).quotas.output).toMatchObject({ limit: 320, remaining: 320 });
    expect(snapshot(open(), null, null, 1_000).quotas).not.toHaveProperty("output");
  });
});

// The grant's own output allowance is what a success's reading bounds the bucket with.
describe("a success's reading of the generated window", () => {
  it("replays only the allowances granted after the reporting request", () => {
    const core = new LimiterCore(cfg);
    core.enqueue(ask("seed"), 0);
    core.pump(0);
    core.settle("seed", out({ info: fireworks(320) }), 10);
    for (let i = 0; i < 3; i++) core.enqueue(ask(`r${i}`), 20);
    core.pump(20);
    // r0's answer: 304 left when it was admitted; r1 and r2 were granted after it.
    core.settle("r0", out({ info: fireworks(304) }), 40);
    expect(available(core.quota.output!, 40)).toBeLessThanOrEqual(304 - 32 + 0.32 * 40 + 1e-6);
    expect(available(core.quota.output!, 40)).toBeGreaterThanOrEqual(304 - 32 - 1e-6);
  });
});
