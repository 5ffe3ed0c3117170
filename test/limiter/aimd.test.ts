import { describe, expect, it } from "vitest";
import type { LimiterConfig } from "../../src/config/limits";
import { HISTORY_MAX, cut, initAimd, noteInFlight, onSuccess, onTransient, rebound, setManual } from "../../src/limiter/aimd";

const cfg: LimiterConfig = { minConcurrency: 1, startConcurrency: 4, maxConcurrency: 64, decreaseFactor: 0.5, scaleUpPercent: 80, cooldownMs: 1_000, leaseTtlMs: 60_000 };

/** One full round at the given peak: `limit` first-attempt successes. */
function round(s: ReturnType<typeof initAimd>, peak: number, now = 0) {
  noteInFlight(s, peak);
  let change = null;
  for (let i = 0, n = s.limit; i < n; i++) change = onSuccess(s, cfg, now, 0) ?? change;
  return change;
}

describe("AIMD", () => {
  it("doubles per used round in slow start, up to max", () => {
    const s = initAimd(cfg);
    expect(round(s, 4)).toMatchObject({ from: 4, to: 8, reason: "slow_start" });
    expect(round(s, 8)).toMatchObject({ from: 8, to: 16 });
    round(s, 16);
    round(s, 32);
    expect(s.limit).toBe(64);
    expect(round(s, 64)).toBeNull();
    expect(s.limit).toBe(64);
  });

  it("does not grow when the round's peak stayed under scaleUpPercent of the limit", () => {
    const s = initAimd(cfg);
    expect(round(s, 3)).toBeNull(); // 3 < ceil(0.8 * 4)
    expect(s.limit).toBe(4);
    expect(round(s, 4)).not.toBeNull();
  });

  it("does not grow before the round is complete", () => {
    const s = initAimd(cfg);
    noteInFlight(s, 4);
    for (let i = 0; i < 3; i++) expect(onSuccess(s, cfg, 0, 0)).toBeNull();
    expect(s.limit).toBe(4);
  });

  it("cuts once per episode on rate limits and leaves slow start", () => {
    const s = initAimd(cfg, 32);
    expect(cut(s, cfg, "rate_limit", 10_000, 30)).toMatchObject({ from: 32, to: 16, reason: "rate_limit" });
    expect(s.phase).toBe("steady");
    expect(cut(s, cfg, "rate_limit", 10_500, 30)).toBeNull(); // same episode
    expect(s.limit).toBe(16);
    expect(cut(s, cfg, "rate_limit", 11_000, 30)).toMatchObject({ from: 16, to: 8 });
  });

  it("a 429 inside the debounce window still stops the round from growing", () => {
    const s = initAimd(cfg, 8);
    cut(s, cfg, "rate_limit", 0, 0);
    noteInFlight(s, 4);
    cut(s, cfg, "rate_limit", 10, 4); // debounced: no cut
    for (let i = 0; i < 4; i++) onSuccess(s, cfg, 20, 0);
    expect(s.limit).toBe(4);
  });

  it("a 429 after the limit has grown back is a new episode, even inside the debounce", () => {
    const s = initAimd(cfg, 16);
    cut(s, cfg, "rate_limit", 0, 0); // 16 -> 8
    round(s, 8, 100); // 8 -> 9: grown since the cut
    expect(cut(s, cfg, "rate_limit", 200, 9)).toMatchObject({ from: 9, to: 4, reason: "rate_limit" });
  });

  it("stays just below the limit that drew the last 429, and probes past it after a while", () => {
    const s = initAimd(cfg, 13);
    cut(s, cfg, "rate_limit", 0, 13); // ceiling 13, limit 6
    for (let l = 6; l < 12; l++) expect(round(s, s.limit, 1_000)).toMatchObject({ from: l, to: l + 1 });
    expect(round(s, 12, 2_000)).toBeNull(); // 13 drew the 429
    expect(s.limit).toBe(12);
    expect(round(s, 12, 6 * cfg.cooldownMs)).toMatchObject({ from: 12, to: 13, reason: "steady_up" }); // probe
  });

  it("never cuts below min", () => {
    const s = initAimd({ ...cfg, minConcurrency: 3 }, 4);
    cut(s, { ...cfg, minConcurrency: 3 }, "rate_limit", 0, 0);
    expect(s.limit).toBe(3);
  });

  it("grows additively after the first cut", () => {
    const s = initAimd(cfg, 16);
    cut(s, cfg, "rate_limit", 0, 0);
    expect(round(s, 8, 5_000)).toMatchObject({ from: 8, to: 9, reason: "steady_up" });
    expect(round(s, 9, 6_000)).toMatchObject({ from: 9, to: 10 });
  });

  it("a transient error spoils the round's growth but never cuts", () => {
    const s = initAimd(cfg);
    noteInFlight(s, 4);
    onTransient(s);
    for (let i = 0; i < 4; i++) onSuccess(s, cfg, 0, 0);
    expect(s.limit).toBe(4);
    expect(s.history).toEqual([]);
    expect(round(s, 4)).toMatchObject({ to: 8 }); // the next clean round grows again
  });

  it("a quota cut trims headroom but never below what is in flight", () => {
    const s = initAimd(cfg, 32);
    expect(cut(s, cfg, "quota", 0, 20)).toMatchObject({ from: 32, to: 20, reason: "quota" });
    expect(cut(s, cfg, "quota", 5_000, 20)).toBeNull(); // nothing to trim
    expect(cut(s, cfg, "quota", 10_000, 4)).toMatchObject({ from: 20, to: 10 });
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
