import { describe, expect, it } from "vitest";
import { type Dated, MINUTE_MS, rollUp } from "../../src/usage/rollup";
import type { UsageRecord } from "../../src/usage/types";

const rec = (over: Partial<UsageRecord> = {}): UsageRecord => ({ model: "m", tokens: { input: 10, output: 5, cached: 2, cacheWrite: 1 }, costUsd: 0.001, ...over });
const T0 = Date.UTC(2026, 10, 24, 5, 0, 0);
const at = (t: number, record = rec(), key = "k"): Dated => ({ key, at: t, record });

describe("minute rollups of an outbox's records", () => {
  it("sums the records of one minute and dimensions into one row", () => {
    const rows = rollUp([at(T0 + 1_000, rec({ caller: "c", tier: "flex" })), at(T0 + 59_999, rec({ caller: "c", tier: "flex" }))]);
    expect(rows).toEqual([{ minute: T0, key: "k", caller: "c", virtualKey: "", pool: "", model: "m", tier: "flex", requests: 2, unknown: 0, unpriced: 0, input: 20, output: 10, cached: 4, cacheWrite: 2, costUsd: 0.002 }]);
  });

  it("a new minute, caller, virtual key, pool, model, tier or key is a row of its own", () => {
    const rows = rollUp([
      at(T0), at(T0 + MINUTE_MS), at(T0, rec({ caller: "x" })), at(T0, rec({ virtualKey: "vk" })), at(T0, rec({ pool: "p" })), at(T0, rec({ model: "n" })), at(T0, rec({ tier: "flex" })), at(T0, rec(), "k2"), at(T0 + 5),
    ]);
    expect(rows).toHaveLength(8);
    expect(rows[0]!.requests).toBe(2);
    expect(rows.slice(1).every((r) => r.requests === 1)).toBe(true);
  });

  it("no usage is counted as unknown; usage without a price as unpriced", () => {
    expect(rollUp([at(T0, rec({ tokens: null, costUsd: null })), at(T0, rec({ costUsd: null }))])).toMatchObject([{ requests: 2, unknown: 1, unpriced: 1, input: 10, costUsd: 0 }]);
  });

  it("nothing pending, no rows", () => {
    expect(rollUp([])).toEqual([]);
  });
});
