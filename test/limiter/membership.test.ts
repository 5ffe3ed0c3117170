import { describe, expect, it } from "vitest";
import { admitPooled, dropProbe, inState, isOut, noteAnswer, OUT_MAX_MS, outFor, PROBE_WAIT_MS } from "../../src/limiter/membership";

describe("a pool member's in/out state", () => {
  it("an out-class answer takes it out for the first length; later answers to earlier requests change nothing", () => {
    const s = inState();
    expect(noteAnswer(s, "r1", "insufficient_quota", 1_000, 10_000)).toBe(true);
    expect(s).toMatchObject({ until: 11_000, reason: "insufficient_quota", strikes: 1 });
    // Requests granted before the out answer later: neither a success nor another refusal moves it.
    expect(noteAnswer(s, "r2", "insufficient_quota", 1_100, 10_000)).toBe(false);
    expect(noteAnswer(s, "r3", undefined, 1_200, 10_000)).toBe(false);
    expect(s.until).toBe(11_000);
  });

  it("evidence from a request that already took a member out keeps a failed probe out, but takes no member in the pool out", () => {
    const s = inState();
    expect(noteAnswer(s, "r1", "insufficient_quota", 1_000, 10_000, true)).toBe(false);
    expect(isOut(s)).toBe(false);
    noteAnswer(s, "r2", "insufficient_quota", 1_000, 10_000);
    admitPooled(s, "probe", 11_000);
    expect(noteAnswer(s, "probe", "insufficient_quota", 11_500, 10_000, true)).toBe(true);
    expect(s).toMatchObject({ strikes: 2, until: 31_500 });
  });

  it("refuses pooled requests until then, lets exactly one through as the probe, and tells the rest to wait for it", () => {
    const s = inState();
    noteAnswer(s, "r1", "401", 0, 10_000);
    expect(admitPooled(s, "a", 5_000)).toEqual({ go: false, retryAfterMs: 5_000 });
    expect(admitPooled(s, "probe", 10_000)).toEqual({ go: true });
    expect(admitPooled(s, "probe", 10_001)).toEqual({ go: true });
    expect(admitPooled(s, "b", 10_001)).toEqual({ go: false, retryAfterMs: PROBE_WAIT_MS });
  });

  it("the probe's good answer puts it back in; a failed probe doubles the time out, up to the cap", () => {
    const s = inState();
    noteAnswer(s, "r1", "403", 0, 10_000);
    admitPooled(s, "p1", 10_000);
    expect(noteAnswer(s, "p1", "403", 10_500, 10_000)).toBe(true);
    expect(s).toMatchObject({ until: 30_500, strikes: 2, probe: null });
    admitPooled(s, "p2", 30_500);
    expect(noteAnswer(s, "p2", undefined, 31_000, 10_000)).toBe(true);
    expect(isOut(s)).toBe(false);
    expect(s.strikes).toBe(0);
    expect(outFor(1, 10_000)).toBe(10_000);
    expect(outFor(3, 10_000)).toBe(40_000);
    expect(outFor(20, 10_000)).toBe(OUT_MAX_MS);
  });

  it("a probe that goes away unanswered lets the next request probe", () => {
    const s = inState();
    noteAnswer(s, "r1", "401", 0, 100);
    admitPooled(s, "p1", 200);
    expect(admitPooled(s, "p2", 200).go).toBe(false);
    dropProbe(s, "p1");
    expect(admitPooled(s, "p2", 200).go).toBe(true);
  });

  it("an in member ignores ordinary answers", () => {
    const s = inState();
    expect(noteAnswer(s, "r1", undefined, 0, 100)).toBe(false);
    expect(admitPooled(s, "x", 0)).toEqual({ go: true });
  });
});
