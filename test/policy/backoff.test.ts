import { describe, expect, it } from "vitest";
import { backoffDelay, decideRetry, type RetryInput } from "../../src/policy/backoff";

const fixed = (x: number) => () => x;

describe("backoffDelay", () => {
  it.each([
    [1, 0, 0], [1, 0.5, 50], [1, 0.999, 99.9], [2, 0.5, 100], [3, 0.5, 200], [4, 0.999, 799.2],
    [5, 0.5, 800], [6, 0.5, 1000], [10, 0.999, 1998], [2000, 0.5, 1000], // capped by maxMs
    [0, 0.5, 50], [-3, 0.5, 50], // attempts below 1 count as the first
  ])("attempt %d, random %d → %d ms (base 100, max 2000)", (attempt, r, ms) =>
    expect(backoffDelay(attempt, 100, 2000, fixed(r))).toBeCloseTo(ms, 9));

  it("stays within [0, min(max, base·2^(attempt-1))) for every attempt", () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(5000, 250 * 2 ** (attempt - 1));
      for (const r of [0, 0.25, 0.5, 0.999]) {
        const d = backoffDelay(attempt, 250, 5000, fixed(r));
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(ceiling);
      }
    }
  });

  it.each([[Number.NaN, 0], [-1, 0], [1.5, 1000]])("clamps a bad random() of %d", (r, ms) =>
    expect(backoffDelay(4, 125, 1000, fixed(r))).toBe(ms));
});

describe("decideRetry", () => {
  const NOW = 1_000_000;
  const base: RetryInput = {
    cls: "rate_limit", attempt: 1, maxAttempts: 4, hintMs: null, now: NOW, deadline: NOW + 60_000,
    baseMs: 1000, maxMs: 30_000, random: fixed(0.5),
  };
  const decide = (over: Partial<RetryInput>) => decideRetry({ ...base, ...over });

  it.each(["success", "hard_quota", "fatal"] as const)("%s is not retryable", (cls) =>
    expect(decide({ cls, hintMs: 10 })).toEqual({ retry: false, reason: "not_retryable" }));

  it("retries rate_limit and transient with jittered backoff", () => {
    expect(decide({})).toEqual({ retry: true, delayMs: 500 });
    expect(decide({ cls: "transient", attempt: 3 })).toEqual({ retry: true, delayMs: 2000 });
  });

  it("stops when attempts run out, before looking at any hint", () => {
    expect(decide({ attempt: 4 })).toEqual({ retry: false, reason: "attempts_exhausted" });
    expect(decide({ attempt: 5, hintMs: 10 })).toEqual({ retry: false, reason: "attempts_exhausted" });
    expect(decide({ attempt: 1, maxAttempts: 1 })).toEqual({ retry: false, reason: "attempts_exhausted" });
  });

  it("uses the server's hint over the computed backoff, not capped by maxMs", () => {
    expect(decide({ hintMs: 1234 })).toEqual({ retry: true, delayMs: 1234 });
    expect(decide({ hintMs: 45_000, maxMs: 30_000 })).toEqual({ retry: true, delayMs: 45_000 });
    expect(decide({ hintMs: 0, random: fixed(0.999) })).toEqual({ retry: true, delayMs: 0 });
    expect(decide({ cls: "transient", hintMs: 5000 })).toEqual({ retry: true, delayMs: 5000 });
  });

  it("returns at once when the hint lands past the deadline", () => {
    expect(decide({ hintMs: 60_001 })).toEqual({ retry: false, reason: "hint_past_deadline" });
    expect(decide({ hintMs: 60_000 })).toEqual({ retry: true, delayMs: 60_000 }); // exactly at the deadline is in time
  });

  it("gives up when the computed delay would pass the deadline", () => {
    expect(decide({ deadline: NOW + 499 })).toEqual({ retry: false, reason: "deadline" });
    expect(decide({ deadline: NOW + 500 })).toEqual({ retry: true, delayMs: 500 });
    expect(decide({ deadline: NOW - 1, random: fixed(0) })).toEqual({ retry: false, reason: "deadline" });
  });

  it.each([Number.NaN, -1, Number.POSITIVE_INFINITY])("ignores an unusable hint %d and backs off", (hintMs) =>
    expect(decide({ hintMs })).toEqual({ retry: true, delayMs: 500 }));
});
