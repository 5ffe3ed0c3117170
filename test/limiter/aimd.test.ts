import { describe, expect, it } from "vitest";
import type { LimiterConfig } from "../../src/config/limits";
import {
  HISTORY_MAX, PROBE_COOLDOWNS, STORM_SHARE, fitPace, initAimd, noteInFlight, onConcurrencyLimit, onSuccess, onTransient, rebound, setManual,
} from "../../src/limiter/aimd";

const cfg: LimiterConfig = { minConcurrency: 1, startConcurrency: 4, maxConcurrency: 64, decreaseFactor: 0.5, scaleUpPercent: 80, cooldownMs: 1_000, leaseTtlMs: 60_000 };
type S = ReturnType<typeof initAimd>;

/** One full steady round at the given peak: `limit` first-attempt successes. */
function round(s: S, peak: number, now = 0) {
  noteInFlight(s, peak);
  let change = null;
  for (let i = 0, n = s.limit; i < n; i++) change = onSuccess(s, cfg, now, peak) ?? change;
  return change;
}

/** A concurrency 429 of a request granted at `level`, numbered `seq`. */
const refuse = (s: S, level: number | null, now: number, seq = 100) => onConcurrencyLimit(s, cfg, now, level ?? 0, { inFlightAtGrant: level, grantSeq: seq, seqNow: seq });

describe("AIMD", () => {
  it("slow start adds a slot per used success (doubling per round trip), up to max", () => {
    const s = initAimd(cfg);
    noteInFlight(s, 4);
    expect(onSuccess(s, cfg, 0, 4)).toMatchObject({ from: 4, to: 5, reason: "slow_start" });
    for (let i = 0; i < 100; i++) onSuccess(s, cfg, 0, s.limit);
    expect(s.limit).toBe(64);
    expect(s.history).toHaveLength(1); // growth steps within a second share one entry
    expect(s.history[0]).toMatchObject({ from: 4, to: 64 });
  });

  it("does not grow when the peak in flight stayed under scaleUpPercent of the limit", () => {
    const s = initAimd(cfg);
    noteInFlight(s, 3); // 3 < ceil(0.8 * 4)
    expect(onSuccess(s, cfg, 0, 3)).toBeNull();
    expect(s.limit).toBe(4);
  });

  it("a concurrency 429 sets the limit just under the refused level and ends slow start", () => {
    const s = initAimd(cfg, 32);
    expect(refuse(s, 21, 0)).toMatchObject({ entry: { from: 32, to: 20, reason: "rate_limit" }, holdAll: false });
    expect(s.phase).toBe("steady");
    expect(s.ceiling).toBe(21);
  });

  it("with the level unknown (a lease from before a restart) cuts by decreaseFactor", () => {
    const s = initAimd(cfg, 32);
    expect(refuse(s, null, 0).entry).toMatchObject({ from: 32, to: 16 });
  });

  it("an echo (granted before the cut) never cuts again, but a lower level narrows the estimate", () => {
    const s = initAimd(cfg, 32);
    refuse(s, 21, 0, 100);
    expect(refuse(s, 25, 10, 90).entry).toBeNull();
    expect(refuse(s, 18, 10, 95)).toMatchObject({ entry: { from: 20, to: 17 }, holdAll: false });
    expect(s.ceiling).toBe(18);
  });

  it("429s granted after the cut, inside cooldownMs, cut again; the second such repeat holds the whole key", () => {
    const s = initAimd(cfg, 32);
    refuse(s, 21, 0, 100);
    expect(refuse(s, 20, 500, 101)).toMatchObject({ entry: { to: 19 }, holdAll: false });
    expect(refuse(s, 19, 600, 102)).toMatchObject({ entry: { to: 18 }, holdAll: true });
    expect(refuse(s, 18, 5_000, 200).holdAll).toBe(false); // past cooldownMs: a new episode
  });

  it("never goes below min", () => {
    const c = { ...cfg, minConcurrency: 3 };
    const s = initAimd(c, 4);
    onConcurrencyLimit(s, c, 0, 0, { inFlightAtGrant: 1, grantSeq: 1, seqNow: 1 });
    expect(s.limit).toBe(3);
  });

  it("recovers toward a known ceiling fast far from it, holds just under it, then probes", () => {
    const s = initAimd(cfg, 40);
    refuse(s, 33, 0); // ceiling 33, limit 32
    setManual(s, cfg, 8, 0, 0); // as if cut far below
    s.phase = "steady";
    const steps: number[] = [];
    for (let i = 0; i < 6; i++) {
      round(s, s.limit, 100);
      steps.push(s.limit);
    }
    expect(steps).toEqual([20, 26, 29, 31, 32, 32]); // half the gap to 32 a round, then hold
    const wait = PROBE_COOLDOWNS * cfg.cooldownMs;
    expect(round(s, 32, wait)).toMatchObject({ from: 32, to: 33, reason: "steady_up" });
    expect(round(s, 33, wait)).toMatchObject({ to: 35 }); // +1, +2, +3...: probing speeds up unrefused
    expect(round(s, 35, wait)).toMatchObject({ to: 38 });
  });

  it("a probe refused where the last one was doubles the wait before the next", () => {
    const s = initAimd(cfg, 40);
    refuse(s, 13, 0, 10); // ceiling 13, limit 12
    const wait = PROBE_COOLDOWNS * cfg.cooldownMs;
    round(s, 12, wait); // probe to 13
    refuse(s, 13, wait, 20); // refused at 13 again
    expect(s.failedProbes).toBe(1);
    expect(round(s, 12, 2 * wait)).toBeNull(); // would have probed; now waits 2 x
    expect(round(s, 12, 3 * wait)).toMatchObject({ to: 13 });
  });

  it("transients never cut, and a few do not pause growth; a storm does", () => {
    const s = initAimd(cfg, 16);
    s.phase = "steady";
    onTransient(s);
    expect(round(s, 16)).toMatchObject({ from: 16, to: 17 });
    for (let i = 0; i < 100; i++) onTransient(s);
    expect(s.faultShare).toBeGreaterThan(STORM_SHARE);
    expect(round(s, 17)).toBeNull();
    expect(s.history.every((h) => h.to > h.from)).toBe(true);
  });

  it("pacing raises the limit to the need, but never to a known ceiling", () => {
    const s = initAimd(cfg);
    expect(fitPace(s, cfg, 30, 0, 4)).toMatchObject({ from: 4, to: 30, reason: "pace" });
    expect(fitPace(s, cfg, 20, 0, 4)).toBeNull(); // never lowers
    refuse(s, 25, 0);
    expect(fitPace(s, cfg, 60, 0, 4)).toBeNull(); // 24 is as high as the ceiling allows
    expect(s.limit).toBe(24);
  });

  it("manual setting and rebounding stay within [min, max]", () => {
    const s = initAimd(cfg);
    expect(setManual(s, cfg, 500, 0, 0)).toMatchObject({ to: 64, reason: "manual" });
    expect(rebound(s, { ...cfg, maxConcurrency: 10 }, 0, 0)).toMatchObject({ from: 64, to: 10, reason: "manual" });
    expect(rebound(s, { ...cfg, maxConcurrency: 10 }, 0, 0)).toBeNull();
  });

  it("keeps at most HISTORY_MAX entries, newest last", () => {
    const s = initAimd(cfg);
    for (let i = 0; i < HISTORY_MAX + 50; i++) setManual(s, cfg, (i % 2) + 2, i, 0);
    expect(s.history).toHaveLength(HISTORY_MAX);
    expect(s.history.at(-1)!.at).toBe(HISTORY_MAX + 49);
  });
});
