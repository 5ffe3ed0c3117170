import { describe, expect, it } from "vitest";
import { type Candidate, choose, earliestReturn, predictedWait } from "../../src/pools/choose";

/** A deterministic "random" stream. */
const seq = (...xs: number[]) => {
  let i = 0;
  return () => xs[i++ % xs.length]!;
};

const seen = (waitMs: number, perMin?: number, sent = 0, at = 0, outMs?: number): Candidate => ({ seen: { view: { waitMs, perMin, ...(outMs !== undefined && { outMs }) }, at, sent } });

describe("choosing a member", () => {
  it("of two drawn, the one that can start sooner wins", () => {
    const members = [seen(500, 600), seen(0, 600)];
    expect(choose(members, 0, seq(0.1, 0.9))).toBe(1);
    expect(choose(members, 0, seq(0.9, 0.1))).toBe(1);
  });

  it("with room on both, draws in proportion to their learned rates", () => {
    const members = [seen(0, 900), seen(0, 300)];
    let first = 0;
    // mulberry32: a seeded stream, so the share is the same every run.
    let a = 7;
    const rnd = () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    for (let i = 0; i < 4_000; i++) if (choose(members, 0, rnd) === 0) first++;
    expect(first / 4_000).toBeGreaterThan(0.7);
    expect(first / 4_000).toBeLessThan(0.8);
  });

  it("counts what this isolate sent since it last heard: a stale view does not herd", () => {
    // Both were idle when heard; 6 sent to the first since: at 600/min that is 600 ms of line.
    const members = [seen(0, 600, 6), seen(0, 600, 0)];
    expect(predictedWait(members[0]!.seen, 0, 600)).toBe(600);
    expect(choose(members, 0, seq(0.1, 0.9))).toBe(1);
  });

  it("time passing since the view runs its wait down", () => {
    const s = seen(1_000, 600, 0, 0).seen;
    expect(predictedWait(s, 400, 600)).toBe(600);
    expect(predictedWait(s, 2_000, 600)).toBe(0);
  });

  it("skips members out; none in: null, and when the first comes back", () => {
    const members = [seen(0, 600, 0, 0, 5_000), seen(0, 600, 0, 0, 2_000)];
    expect(choose(members, 1_000, seq(0.5))).toBeNull();
    expect(earliestReturn(members)).toBe(2_000);
    expect(choose(members, 2_000, seq(0.5))).toBe(1);
    expect(choose([seen(0, 600, 0, 0, 5_000), seen(100)], 0, seq(0.5))).toBe(1);
  });

  it("a member never heard of is tried", () => {
    expect(choose([seen(2_000, 600), { seen: undefined }], 0, seq(0.1, 0.9))).toBe(1);
  });
});
