import { describe, expect, it } from "vitest";
import { emptyRing, LATENCY_KEEP, type Levels, noteAttempt, noteLevels, restoreRing, series, SLOTS, SPAN_MS, STEP_MS } from "../../src/limiter/samples";

const T0 = 1_795_000_000_000; // a multiple of STEP_MS
const lv = (inFlight: number, limit = 8, queued = 0, rate: number | null = null): Levels => ({ inFlight, queued, limit, rate });

describe("sample ring", () => {
  it("buckets per STEP_MS: answers per second, 429s, transients, peak in flight and queue, the levels at the end", () => {
    const r = emptyRing();
    noteLevels(r, T0, lv(1));
    noteLevels(r, T0 + 100, lv(5, 8, 3));
    for (let i = 0; i < 10; i++) noteAttempt(r, T0 + 200 + i, lv(4, 8, 2, 8.33), { cls: "success", latencyMs: (i + 1) * 10 });
    noteAttempt(r, T0 + 300, lv(4), { cls: "rate_limit", latencyMs: 5 });
    noteAttempt(r, T0 + 301, lv(3, 4), { cls: "transient", latencyMs: 5 });
    const [p, ...rest] = series(r, T0 + 1_000);
    expect(rest).toEqual([]);
    expect(p).toEqual({ t: T0, answersPerSec: 10 / (STEP_MS / 1_000), rateLimited: 1, transient: 1, inFlight: 3, inFlightMax: 5, limit: 4, queued: 3, rate: null, p50: 40, p99: 100 }); // 5, 5, 10 ... 100: the 6th of 12
  });

  it("fills quiet buckets: no answers, levels as the last event left them; closed buckets keep p50 and p99", () => {
    const r = emptyRing();
    noteAttempt(r, T0, lv(2, 6, 0, 10), { cls: "success", latencyMs: 300 });
    noteLevels(r, T0 + 10, lv(1, 6, 0, 10));
    noteAttempt(r, T0 + 3 * STEP_MS, lv(0, 7), { cls: "success", latencyMs: 100 });
    const pts = series(r, T0 + 3 * STEP_MS + 1);
    expect(pts.map((p) => p.t)).toEqual([0, 1, 2, 3].map((i) => T0 + i * STEP_MS));
    expect(pts.map((p) => [p.answersPerSec > 0, p.inFlight, p.limit, p.rate, p.p50])).toEqual([
      [true, 1, 6, 10, 300],
      [false, 1, 6, 10, null],
      [false, 1, 6, 10, null],
      [true, 0, 7, null, 100],
    ]);
    expect(r.buckets[0]!.lat).toEqual([]); // closed: only its percentiles remain
  });

  it("holds at most 15 minutes: SLOTS buckets, older ones dropped, the series never longer than SLOTS", () => {
    const r = emptyRing();
    for (let i = 0; i < SLOTS * 2; i++) noteAttempt(r, T0 + i * STEP_MS, lv(1), { cls: "success", latencyMs: 1 });
    expect(r.buckets).toHaveLength(SLOTS);
    const now = T0 + (SLOTS * 2 - 1) * STEP_MS;
    expect(r.buckets[0]!.t).toBe(now - SPAN_MS + STEP_MS);
    const pts = series(r, now);
    expect(pts).toHaveLength(SLOTS);
    // Later, with nothing new: the window slides, the old buckets fall out of the series.
    expect(series(r, now + 10 * STEP_MS)).toHaveLength(SLOTS);
    expect(series(r, now + 10 * STEP_MS)[0]!.t).toBe(now + 10 * STEP_MS - SPAN_MS + STEP_MS);
    expect(series(emptyRing(), now)).toEqual([]);
  });

  it("keeps at most LATENCY_KEEP latencies per bucket, the latest ones", () => {
    const r = emptyRing();
    for (let i = 0; i < LATENCY_KEEP * 3; i++) noteAttempt(r, T0, lv(1), { cls: "success", latencyMs: i < LATENCY_KEEP * 2 ? 1 : 1_000 });
    expect(r.buckets[0]!.lat).toHaveLength(LATENCY_KEEP);
    expect(series(r, T0)[0]!.p50).toBe(1_000);
    expect(series(r, T0)[0]!.answersPerSec).toBe((LATENCY_KEEP * 3 * 1_000) / STEP_MS);
  });

  it("a clock that goes back lands in the newest bucket", () => {
    const r = emptyRing();
    noteLevels(r, T0 + STEP_MS, lv(1));
    noteAttempt(r, T0, lv(2), { cls: "rate_limit", latencyMs: 1 });
    expect(r.buckets).toHaveLength(1);
    expect(r.buckets[0]).toMatchObject({ t: T0 + STEP_MS, rateLimited: 1, inFlight: 2 });
  });

  it("survives a JSON round trip (its row in SQLite) and restores only what is sound and recent", () => {
    const r = emptyRing();
    for (let i = 0; i < 5; i++) noteAttempt(r, T0 + i * STEP_MS, lv(i, 8, 0, 2), { cls: "success", latencyMs: 10 * i });
    const back = restoreRing(JSON.parse(JSON.stringify(r)), T0 + 5 * STEP_MS);
    expect(series(back, T0 + 5 * STEP_MS)).toEqual(series(r, T0 + 5 * STEP_MS));
    const stored = JSON.parse(JSON.stringify(r));
    stored.buckets.splice(1, 0, { t: "x" }, { t: T0 + 1 }, { t: T0 }); // not a number, off the grid, out of order
    expect(restoreRing(stored, T0 + 5 * STEP_MS).buckets).toHaveLength(5);
    expect(restoreRing(JSON.parse(JSON.stringify(r)), T0 + SPAN_MS + 2 * STEP_MS).buckets.map((b) => b.t)).toEqual([T0 + 3 * STEP_MS, T0 + 4 * STEP_MS]);
    for (const bad of [null, 3, {}, { buckets: "no" }]) expect(restoreRing(bad, T0)).toEqual(emptyRing());
  });
});
