import { describe, expect, it } from "vitest";
import { comeBackAfter, pacingOf } from "../../src/limiter/advice";

const base = { openInMs: 0, ahead: 0, share: 1, limit: 10, avgLatencyMs: 1_000, ratePerMs: null };

describe("advice", () => {
  it("pacing hints: the limit always; the rate per minute, whole from 10 up and two digits below", () => {
    expect(pacingOf(16, null)).toEqual({ limit: 16 });
    expect(pacingOf(16, 1_200 / 60_000)).toEqual({ limit: 16, ratePerMin: 1_200 });
    expect(pacingOf(4, 3.14159 / 60_000)).toEqual({ limit: 4, ratePerMin: 3.1 });
  });

  it("retry-after: the caller's own line at its share of the key, the gate or quota if later, at least 1 s", () => {
    expect(comeBackAfter(base)).toBe(1_000);
    expect(comeBackAfter({ ...base, ahead: 100 })).toBe(10_000); // 10 rounds of 10 slots
    expect(comeBackAfter({ ...base, ahead: 100, share: 0.25 })).toBe(40_000); // a quarter of the slots
    expect(comeBackAfter({ ...base, ahead: 100, ratePerMs: 1 / 1_000 })).toBe(100_000); // the quota paces slower
    expect(comeBackAfter({ ...base, ahead: 1, openInMs: 30_000 })).toBe(30_000);
    expect(comeBackAfter({ ...base, ahead: 20, openInMs: Number.POSITIVE_INFINITY })).toBe(2_000);
  });
});
