import { describe, expect, it } from "vitest";
import { learnFromRefusal, probe } from "../../src/limiter/learned";
import type { QuotaState } from "../../src/limiter/quota";

describe("learnFromRefusal", () => {
  // A refusal a while after the first episode counts that episode's burst in its period too: it
  // must not raise the learned limit to that count (it says the limit is at most that), or the
  // key runs above the refill until the burst has left the period (Vertex's minute quota, issue 41).
  it("no headers: a refusal half a minute after the first episode keeps the learned limit, never the burst it still counts", () => {
    // 60 let through at once, refused at 61 (learned: 60 a minute); then one a second for 28 s, and a refusal.
    const recent = [...Array.from({ length: 60 }, (_, i) => ({ n: i + 1, at: 1_000, cost: 1 })), ...Array.from({ length: 28 }, (_, i) => ({ n: 62 + i, at: 2_000 + i * 1_000, cost: 1 }))];
    const q: QuotaState = { requests: null, tokens: null, granted: { requests: 61, tokens: 61 }, recent: recent.slice(0, 60) };
    learnFromRefusal(q, { kind: "requests", periodMs: 60_000, limit: null }, { mark: { requests: 61, tokens: 61 }, grantedAt: 1_100, cost: 1 }, 1_400);
    expect(q.requests?.limit).toBe(60);
    q.recent = recent;
    q.granted = { requests: 90, tokens: 90 };
    learnFromRefusal(q, { kind: "requests", periodMs: 60_000, limit: null }, { mark: { requests: 90, tokens: 90 }, grantedAt: 29_000, cost: 1 }, 29_100);
    expect(q.requests?.limit, "88 counted in the minute before, 60 of them the first burst").toBe(60);
    // A refusal that counts fewer lowers it, at most to MOST_CUT of it at once.
    learnFromRefusal(q, { kind: "requests", periodMs: 60_000, limit: null }, { mark: { requests: 90, tokens: 90 }, grantedAt: 200_000, cost: 1 }, 200_100);
    expect(q.requests?.limit).toBe(42);
  });

  // Vertex's Claude limits its output tokens a minute apart: a refusal of that quota is counted in
  // what the grants let through asked to generate, not in their prompts, nor in requests.
  it("a refusal of generated tokens learns a window of them, counted in the grants' output allowances", () => {
    const recent = Array.from({ length: 30 }, (_, i) => ({ n: i + 1, at: 1_000 + i * 10, cost: 500, out: 2_000 }));
    const q: QuotaState = { requests: null, tokens: null, output: null, granted: { requests: 32, tokens: 16_000, output: 64_000 }, recent: [...recent, { n: 31, at: 1_400, cost: 500, out: 2_000 }, { n: 32, at: 1_500, cost: 500, out: 1_000 }] };
    learnFromRefusal(q, { kind: "output", periodMs: 60_000, limit: null }, { mark: { requests: 31, tokens: 15_500, output: 62_000 }, grantedAt: 1_400, cost: 500, out: 2_000 }, 1_600);
    expect(q.requests).toBeNull();
    expect(q.tokens).toBeNull();
    expect(q.output).toMatchObject({ limit: 60_000, capacity: 60_000, source: "refusals", remaining: -1_000 });
    expect(q.output!.refillPerMs).toBeCloseTo(1, 6);
    // Successes while its pace binds raise it, by what they generate.
    q.output!.remaining = 0;
    q.output!.observedAt = 1_600;
    probe(q, 500, 1_600, 2_000);
    expect(q.output!.limit).toBeGreaterThan(60_000);
    expect(q.requests).toBeNull();
  });

  it("a refusal of generated tokens on a request that named no output allowance learns its requests", () => {
    const q: QuotaState = { requests: null, tokens: null, output: null, granted: { requests: 11, tokens: 1_100 }, recent: Array.from({ length: 10 }, (_, i) => ({ n: i + 1, at: 1_000, cost: 100 })) };
    learnFromRefusal(q, { kind: "output", periodMs: 60_000, limit: null }, { mark: { requests: 11, tokens: 1_100 }, grantedAt: 1_100, cost: 100 }, 1_200);
    expect(q.output).toBeNull();
    expect(q.requests?.limit).toBe(10);
  });

  // Seen through wrangler dev (e2e vertex): 64 sent at once into a bucket of 60, the provider
  // refused grants 61, 60, 59 and 58 (their sends overtaken by 62 to 64). Counting again at each
  // refusal from the grants numbered before it lowered the limit to 57 where 60 went through.
  it("the refusals of one burst, its sends reordered: the first sets the window, the rest leave its limit", () => {
    const recent = Array.from({ length: 64 }, (_, i) => ({ n: i + 1, at: 1_000, cost: 10 }));
    const q: QuotaState = { requests: null, tokens: null, granted: { requests: 64, tokens: 640 }, recent };
    const refuse = (n: number, now: number, grantedAt = 1_000) => learnFromRefusal(q, { kind: "requests", periodMs: 60_000, limit: null }, { mark: { requests: n, tokens: 10 * n }, grantedAt, cost: 10 }, now);
    refuse(61, 1_200);
    expect(q.requests).toMatchObject({ limit: 60, remaining: -3, learned: { at: 1_200, n: 61 } });
    for (const n of [60, 59, 58]) refuse(n, 1_210);
    expect(q.requests!.limit, "not 57").toBe(60);
    expect(q.requests!.remaining).toBe(-3);
    // One numbered after the first, owed in the level: refused, it drew nothing.
    refuse(63, 1_220);
    expect(q.requests!.limit).toBe(60);
    expect(q.requests!.remaining).toBeCloseTo(-2 + (60 / 60_000) * 20, 6);
    // A refusal of a later grant is a new episode: counted again (grants 65 and 66 after the window was learned).
    q.recent!.push({ n: 65, at: 30_000, cost: 10 }, { n: 66, at: 30_000, cost: 10 });
    q.granted = { requests: 66, tokens: 660 };
    refuse(66, 30_100, 30_000);
    expect(q.requests!.learned).toEqual({ at: 30_100, n: 66 });
    expect(q.requests!.limit).toBe(60);
  });
});
