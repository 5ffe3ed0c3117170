import { describe, expect, it } from "vitest";
import { MINUTE_MS, Rollup, ROWS_MAX } from "../../src/usage/rollup";
import type { UsageRecord } from "../../src/usage/meter";

const rec = (over: Partial<UsageRecord> = {}): UsageRecord => ({ model: "m", tokens: { input: 10, output: 5, cached: 2, cacheWrite: 1 }, costUsd: 0.001, ...over });
const T0 = Date.UTC(2026, 10, 24, 5, 0, 0);

describe("minute rollups", () => {
  it("sums the records of one minute and dimensions into one row", () => {
    const r = new Rollup();
    r.add("a", "k", rec({ caller: "c" }), T0 + 1_000);
    r.add("b", "k", rec({ caller: "c" }), T0 + 59_999);
    const rows = r.take();
    expect(rows).toEqual([{ minute: T0, key: "k", caller: "c", virtualKey: "", pool: "", model: "m", requests: 2, unknown: 0, unpriced: 0, input: 20, output: 10, cached: 4, cacheWrite: 2, costUsd: 0.002 }]);
    expect(r.size).toBe(0);
  });

  it("a new minute, caller, virtual key, pool or model is a row of its own", () => {
    const r = new Rollup();
    r.add("1", "k", rec(), T0);
    r.add("2", "k", rec(), T0 + MINUTE_MS);
    r.add("3", "k", rec({ caller: "x" }), T0);
    r.add("4", "k", rec({ virtualKey: "vk" }), T0);
    r.add("5", "k", rec({ pool: "p" }), T0);
    r.add("6", "k", rec({ model: "n" }), T0);
    r.add("7", "k2", rec(), T0);
    expect(r.size).toBe(7);
  });

  it("no usage is counted as unknown; usage without a price as unpriced", () => {
    const r = new Rollup();
    r.add("1", "k", rec({ tokens: null, costUsd: null }), T0);
    r.add("2", "k", rec({ costUsd: null }), T0);
    expect(r.take()[0]).toMatchObject({ requests: 2, unknown: 1, unpriced: 1, input: 10, costUsd: 0 });
  });

  it("a lease's record carried twice is counted once", () => {
    const r = new Rollup();
    expect(r.add("a", "k", rec(), T0)).toBe(true);
    expect(r.add("a", "k", rec(), T0)).toBe(false);
    expect(r.take()[0]!.requests).toBe(1);
  });

  it("rows given back after a failed write merge with what came since", () => {
    const r = new Rollup();
    r.add("1", "k", rec(), T0);
    const rows = r.take();
    r.add("2", "k", rec(), T0);
    r.putBack(rows);
    expect(r.take()).toMatchObject([{ requests: 2, input: 20 }]);
  });

  it("is bounded: past ROWS_MAX the oldest minute goes, and is counted as dropped", () => {
    const r = new Rollup();
    for (let i = 0; i <= ROWS_MAX; i++) r.add(`id${i}`, "k", rec({ caller: `c${i}` }), T0 + (i === 0 ? 0 : MINUTE_MS));
    expect(r.size).toBe(ROWS_MAX);
    expect(r.dropped).toBe(1);
    expect(r.take().some((row) => row.minute === T0)).toBe(false);
  });
});
