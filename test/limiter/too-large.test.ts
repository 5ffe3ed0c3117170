// A request that can never fit its key (src/limiter/too-large.ts, through LimiterCore and Waiters):
// turned away at once, never waited for at the head of the queue, and only on a limit the provider
// told (and refuses larger requests against), not on one learned.
import { describe, expect, it } from "vitest";
import { Waiters } from "../../src/limiter/waiters";
import { neverFits, TOLD_FRESH_MS } from "../../src/limiter/too-large";
import type { RateLimitInfo } from "../../src/policy/types";
import { open, out, w } from "../support/opened-core";

/** A reading of a tokens window of `limit` a minute, `remaining` left; `refuses`: the provider refuses a request above it (OpenAI's, Groq's). */
const tokens = (limit: number | null, remaining: number, refuses = true): RateLimitInfo => ({
  retryAfterMs: null, requests: null, tokens: { limit, remaining, resetAt: null, periodMs: 60_000, ...(refuses && { refusesLarger: true }) },
});

describe("a request larger than a told limit", () => {
  it("is turned away when it asks, with the limit it passes; one that fits queues", () => {
    const core = open(tokens(200_000, 200_000));
    expect(core.enqueue(w("big", { cost: 1_000_040 }), 1_000)).toEqual({ kind: "rejected", retryAfterMs: 0, tooLarge: { cost: 1_000_040, limit: 200_000, periodMs: 60_000 } });
    expect(core.enqueue(w("max", { cost: 200_000 }), 1_000)).toEqual({ kind: "queued" });
    expect(core.queue.size).toBe(1);
  });

  it("does not hold the queue: a small request behind a large one that fits nothing is granted at once", () => {
    // A window of 100,000 with 10,000 left: before, the large one waited at the head for it to fill (a minute), and everyone behind it.
    const core = open(tokens(100_000, 100_000));
    core.enqueue(w("r"), 20);
    core.pump(20);
    core.settle("r", out({ info: tokens(100_000, 10_000) }), 30);
    core.release("r", 30);
    expect(core.enqueue(w("huge", { cost: 500_000, caller: "trap", deadline: 600_000 }), 1_000)).toMatchObject({ kind: "rejected", tooLarge: { limit: 100_000 } });
    core.enqueue(w("small", { cost: 100, caller: "victim" }), 1_000);
    expect(core.pump(1_000).granted.map((x) => x.id)).toEqual(["small"]);
  });

  it("one queued before the limit was told is turned away once it is, from the head of the line", () => {
    const core = open();
    core.enqueue(w("huge", { cost: 500_000, deadline: 600_000 }), 1_000);
    core.enqueue(w("next", { cost: 10, deadline: 600_000 }), 1_000);
    core.enqueue(w("busy", { cost: 10, deadline: 600_000 }), 1_000);
    // Nothing known yet: it is granted as it was (the provider answers it).
    expect(core.pump(1_000).granted.map((x) => x.id)).toEqual(["huge", "next", "busy"]);
    core.settle("huge", out({ cls: "too_large", status: 429, info: tokens(100_000, 100_000) }), 1_100);
    core.release("huge", 1_100);
    core.enqueue(w("again", { cost: 500_000, deadline: 600_000 }), 1_200);
    expect(core.queue.size).toBe(0);
    // Queued before any reading, it is turned away at the head once a reading tells the limit.
    const fresh = open();
    fresh.enqueue(w("a", { cost: 500_000, deadline: 600_000 }), 0);
    fresh.enqueue(w("b", { cost: 10, deadline: 600_000 }), 0);
    fresh.quota.tokens = { limit: 100_000, remaining: 0, observedAt: 0, refillPerMs: 100_000 / 60_000, capacity: 100_000, readAt: 0, periodMs: 60_000, source: "headers", refusesLarger: true };
    const p = fresh.pump(0);
    expect(p.tooLarge.map(([x, why]) => [x.id, why.limit])).toEqual([["a", 100_000]]);
    expect(fresh.queue.size).toBe(1); // b waits for the window's refill, not behind a
  });

  it("never on a learned limit, a limit the provider does not refuse larger requests against, or a reading older than TOLD_FRESH_MS", () => {
    // Azure: remaining only; the window is learned, an estimate that may be too low.
    expect(neverFits(open(tokens(null, 50_000)).quota, 500_000, 1_000)).toBeNull();
    // Anthropic's combined window (no such refusal: its input and output are counted apart).
    expect(neverFits(open(tokens(50_000, 50_000, false)).quota, 500_000, 1_000)).toBeNull();
    const core = open(tokens(100_000, 100_000));
    expect(neverFits(core.quota, 100_001, 1_000)).toMatchObject({ limit: 100_000 });
    expect(neverFits(core.quota, 100_000, 1_000)).toBeNull();
    const readAt = core.quota.tokens!.readAt!;
    expect(neverFits(core.quota, 100_001, readAt + TOLD_FRESH_MS)).not.toBeNull();
    expect(neverFits(core.quota, 100_001, readAt + TOLD_FRESH_MS + 1)).toBeNull();
  });

  it("a provider's too-large refusal neither cuts the key, shuts its gate, nor takes its tickets back; its reading tells the limit", () => {
    const core = open();
    for (const id of ["a", "b", "c"]) core.enqueue(w(id), 1_000);
    core.pump(1_000);
    const [limit, epoch] = [core.aimd.limit, core.epoch];
    core.settle("a", out({ cls: "too_large", status: 429, info: tokens(200_000, 200_000) }), 1_050);
    expect([core.aimd.limit, core.cooldownUntil > 1_050, core.epoch]).toEqual([limit, false, epoch]);
    expect(core.aimd.history.filter((h) => h.reason === "rate_limit")).toEqual([]);
    expect(core.retryWord(out({ cls: "too_large", status: 429, final: false }), 1_050)).toEqual({ retry: "wait" });
    expect(core.enqueue(w("d", { cost: 300_000 }), 1_100)).toMatchObject({ kind: "rejected", tooLarge: { limit: 200_000 } });
  });

  it("Waiters answers it too_large at once, and a queued one when it is turned away; neither is a queue time-out", () => {
    const core = open(tokens(100_000, 100_000));
    const timeouts: string[] = [];
    const waiters = new Waiters(core, () => 1_000, () => {}, (how) => timeouts.push(how), { set: () => 0, clear: () => {} });
    return Promise.all([
      waiters.acquire({ id: "x", cost: 300_000, retry: false, deadline: 60_000 }).then((r) => expect(r).toMatchObject({ granted: false, reason: "too_large", retryAfterMs: 0, tooLarge: { limit: 100_000, cost: 300_000 } })),
      waiters.acquire({ id: "y", cost: 10, retry: false, deadline: 60_000 }).then((r) => expect(r).toMatchObject({ granted: true })),
    ]).then(() => expect(timeouts).toEqual([]));
  });
});
