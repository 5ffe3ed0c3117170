import { describe, expect, it } from "vitest";
import { learnFromRefusal } from "../../src/limiter/learned";
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
});
