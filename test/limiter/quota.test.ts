// A key's quota windows and what they allow (src/limiter/quota.ts); readings set them up here (quota-reading.ts).
import { describe, expect, it } from "vitest";
import { emptyQuota, fitsAt, paceRate, room, tight, describe as view } from "../../src/limiter/quota";
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
