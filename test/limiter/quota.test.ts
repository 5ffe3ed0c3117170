// A key's quota windows and what they allow (src/limiter/quota.ts); readings set them up here (quota-reading.ts).
import { describe, expect, it } from "vitest";
import { learnFromRefusal } from "../../src/limiter/learned";
import { available, charge, emptyQuota, fitsAt, giveBack, paceRate, room, tight, describe as view } from "../../src/limiter/quota";
import { applyStated } from "../../src/limiter/stated";
import { observe } from "../../src/limiter/quota-reading";
import type { QuotaReading, RateLimitInfo } from "../../src/policy/types";

const info = (requests: QuotaReading | null, tokens: QuotaReading | null = null): RateLimitInfo => ({ retryAfterMs: null, requests, tokens });

describe("quota model", () => {
  it("knows nothing until the provider reports, and then never blocks", () => {
    const q = emptyQuota();
    expect(fitsAt(q, 1_000_000, 5)).toBe(5);
  });

  it("tells room from an empty window, and unknown when nothing was reported", () => {
    const q = emptyQuota();
    expect(room(q, 1, 0)).toBe("unknown");
    observe(q, info({ limit: 600, remaining: 3, resetAt: 60_000 }), 0);
    expect(room(q, 1, 0)).toBe("room");
    expect(tight(q, 5, 0, 0)).toBe(true);
    expect(tight(q, 3, 0, 0)).toBe(false);
    observe(q, info({ limit: 600, remaining: 0, resetAt: 60_000 }), 0);
    expect(room(q, 1, 0)).toBe("empty");
  });

  it("paces at the tighter of the request rate and the token rate over the mean cost", () => {
    const q = emptyQuota();
    expect(paceRate(q, 100)).toBeNull();
    observe(q, { retryAfterMs: null, requests: { limit: 600, remaining: 0, resetAt: 60_000 }, tokens: { limit: 60_000, remaining: 0, resetAt: 60_000 } }, 0);
    expect(paceRate(q, 10)).toBeCloseTo(0.01); // requests bind: 10/s
    expect(paceRate(q, 1_000)).toBeCloseTo(0.001); // tokens bind: 1/s
  });

  it("holds a request whose token cost does not fit until enough tokens refill", () => {
    const q = emptyQuota();
    observe(q, info(null, { limit: 60_000, remaining: 1_000, resetAt: 59_000 }), 0); // 1 token/ms
    expect(fitsAt(q, 800, 0)).toBe(0);
    expect(fitsAt(q, 3_000, 0)).toBe(2_000);
  });

  it("lets a request larger than the whole window go once the window is full", () => {
    const q = emptyQuota();
    observe(q, info(null, { limit: 1_000, remaining: 0, resetAt: 60_000 }), 0);
    expect(fitsAt(q, 5_000, 0)).toBe(60_000);
  });

  it("uses the tighter of the two windows", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 100, remaining: 50, resetAt: 30_000 }, { limit: 60_000, remaining: 0, resetAt: 60_000 }), 0);
    expect(fitsAt(q, 200, 0)).toBe(200);
  });

  it("describes remaining and the time the window is full again", () => {
    const q = emptyQuota();
    observe(q, info({ limit: 100, remaining: 40, resetAt: 36_000 }), 0);
    expect(view(q.requests, 0)).toEqual({ limit: 100, remaining: 40, resetAt: new Date(36_000).toISOString() });
    expect(view(null, 0)).toBeNull();
  });
});

describe("a window of generated tokens alone (Fireworks' Generated TPM)", () => {
  /** Prompt tokens 60,000 a second, generated 320 a second, each a 1 s bucket told with its limit. */
  const fireworks = (prompt: number, generated: number): RateLimitInfo => ({
    retryAfterMs: null, requests: null,
    tokens: { limit: 60_000, remaining: prompt, resetAt: null, periodMs: 1_000 },
    output: { limit: 320, remaining: generated, resetAt: null, periodMs: 1_000 },
  });

  it("is charged each grant's output allowance, not its whole cost, and the prompt's window the whole cost", () => {
    const q = emptyQuota();
    observe(q, fireworks(60_000, 320), 0);
    charge(q, 28, 0, 16);
    expect(view(q.output!, 0)!.remaining).toBe(304);
    expect(view(q.tokens!, 0)!.remaining).toBe(59_972);
    expect(q.granted).toEqual({ requests: 1, tokens: 28, output: 16 });
  });

  it("holds a request until its output fits, though the prompt's window has plenty", () => {
    const q = emptyQuota();
    observe(q, fireworks(60_000, 8), 0); // 0.32 generated tokens a ms
    expect(fitsAt(q, 28, 0, 1, false, 0, 8)).toBe(0);
    expect(fitsAt(q, 28, 0, 1, false, 0, 16)).toBe(25); // 8 more at 0.32 a ms
    // A request that names no output allowance is not held by that window.
    expect(fitsAt(q, 28, 0)).toBe(0);
    expect(room(q, 28, 0, 16)).toBe("empty");
    expect(tight(q, 1, 28, 0, 16)).toBe(true);
    expect(tight(q, 1, 28, 0, 8)).toBe(false);
  });

  it("paces at its rate over the mean output where it binds", () => {
    const q = emptyQuota();
    observe(q, fireworks(0, 0), 0);
    // Prompt: 60 tokens a ms over 28 a request (2.1 a ms); generated: 0.32 over 16 (0.02 a ms).
    expect(paceRate(q, 28, 16)).toBeCloseTo(0.02);
    expect(paceRate(q, 28)).toBeCloseTo(60 / 28);
  });
});

describe("giveBack: a provider that returns what an answer did not use of its reservation (Bedrock)", () => {
  it("credits a stated window with what a grant was charged above what its answer drew, once, never above the bucket", () => {
    const q = emptyQuota();
    applyStated(q, { tokens: 60_000 }, 0);
    charge(q, 5_040, 0); // grant 1: a prompt of 40 and maxTokens 1,000 at five
    charge(q, 5_040, 0); // grant 2
    expect(available(q.tokens!, 0)).toBe(60_000 - 10_080);
    // Grant 1's answer: its prompt and 200 output tokens at five drew 1,040.
    expect(giveBack(q, 1, 1_040, 0)).toBe(true);
    expect(available(q.tokens!, 0)).toBe(60_000 - 1_040 - 5_040);
    // Counted at what it drew from then on (a refusal's count reads the log), and never given back twice.
    expect(q.recent!.find((e) => e.n === 1)!.cost).toBe(1_040);
    expect(giveBack(q, 1, 1_040, 0)).toBe(false);
    // An answer that drew all it was charged, or more, gives nothing back.
    expect(giveBack(q, 2, 5_040, 0)).toBe(false);
    expect(giveBack(q, 2, 9_000, 0)).toBe(false);
    expect(available(q.tokens!, 0)).toBe(60_000 - 1_040 - 5_040);
    // A full bucket stays full; a grant the log no longer holds gives nothing back.
    const full = emptyQuota();
    applyStated(full, { tokens: 1_000 }, 0);
    charge(full, 500, 0);
    expect(giveBack(full, 1, 0, 60_000)).toBe(true);
    expect(available(full.tokens!, 60_000)).toBe(1_000);
    expect(giveBack(full, 7, 0, 60_000)).toBe(false);
  });

  it("leaves a window the provider's headers tell alone (its next reading says it), and a key with no tokens window", () => {
    const q = emptyQuota();
    observe(q, info(null, { limit: 10_000, remaining: 10_000, resetAt: 60_000 }), 0);
    charge(q, 5_000, 0);
    const before = available(q.tokens!, 0);
    expect(giveBack(q, 1, 100, 0)).toBe(false);
    expect(available(q.tokens!, 0)).toBe(before);
    expect(q.recent!.find((e) => e.n === 1)!.cost, "a reading's replay counts what was charged").toBe(5_000);
    const none = emptyQuota();
    applyStated(none, { requests: 50 }, 0);
    charge(none, 5_000, 0);
    expect(giveBack(none, 1, 100, 0)).toBe(false);
    // With no tokens window yet, the grant is counted at what it drew: a refusal that teaches one
    // (Bedrock's "Too many tokens") counts what Bedrock let through, not the reservations.
    expect(none.recent!.find((e) => e.n === 1)!.cost).toBe(100);
    charge(none, 5_000, 1);
    giveBack(none, 2, 200, 1);
    charge(none, 50, 2);
    learnFromRefusal(none, { kind: "tokens", periodMs: 60_000, limit: null }, { mark: { ...none.granted }, grantedAt: 2, cost: 50 }, 3);
    expect(none.tokens?.limit, "100 and 200 drawn, where 10,000 were reserved").toBe(300);
  });
});
