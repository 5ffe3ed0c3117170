import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { queryUsage, writeRows } from "../../src/usage/ledger";
import type { Row } from "../../src/usage/rollup";
import { FLUSH_MS, flushMs, LedgerWriter } from "../../src/usage/writer";

const T0 = Date.UTC(2030, 0, 1, 0, 0);
const row = (o: Partial<Row> = {}): Row => ({
  minute: T0, key: "openai:m:1", caller: "", virtualKey: "", pool: "", model: "m",
  requests: 1, unknown: 0, unpriced: 0, input: 10, output: 2, cached: 1, cacheWrite: 0, costUsd: 0.5, ...o,
});

describe("the ledger in D1", () => {
  it("a row written twice adds up; rows of other dimensions stay apart; queries group by one", async () => {
    const db = env.LEDGER!;
    await writeRows(db, [row(), row({ caller: "a" })]);
    await writeRows(db, [row(), row({ minute: T0 + 60_000, caller: "a", costUsd: 0.25 })]);
    const all = await queryUsage(db, T0, T0 + 120_000, null, 100);
    expect(all.rows).toEqual([
      { minute: T0, requests: 3, unknownUsage: 0, unpricedRequests: 0, inputTokens: 30, outputTokens: 6, cachedTokens: 3, cacheWriteTokens: 0, costUsd: 1.5 },
      { minute: T0 + 60_000, requests: 1, unknownUsage: 0, unpricedRequests: 0, inputTokens: 10, outputTokens: 2, cachedTokens: 1, cacheWriteTokens: 0, costUsd: 0.25 },
    ]);
    expect(all.totals).toMatchObject({ requests: 4, costUsd: 1.75 });
    const byCaller = await queryUsage(db, T0, T0 + 60_000, "caller", 100);
    expect(byCaller.rows.map((r) => [r.dim, r.requests])).toEqual([["", 2], ["a", 1]]);
    // The limit is honoured, with one more row to tell the caller there were more.
    expect((await queryUsage(db, T0, T0 + 120_000, "caller", 1)).rows).toHaveLength(2);
  });
});

describe("LedgerWriter", () => {
  const rec = { model: "m", tokens: { input: 1, output: 1, cached: 0, cacheWrite: 0 }, costUsd: 0.001 };

  it("writes nothing until its flush, then one batch; a failed batch keeps its rows for the next", async () => {
    const batches: unknown[][] = [];
    let fail = true;
    const stmt = { bind: (...args: unknown[]) => args };
    const db = {
      prepare: () => stmt,
      batch: async (stmts: unknown[]) => {
        if (fail) throw new Error("D1 is down");
        batches.push(stmts);
        return [];
      },
    } as unknown as D1Database;
    const kept: Promise<unknown>[] = [];
    const w = new LedgerWriter(db, 60_000, (p) => kept.push(p));
    w.add("a", "k", rec, T0);
    w.add("b", "k", rec, T0);
    expect(batches).toHaveLength(0);
    await w.flush();
    expect(w.rollup.requests).toBe(2);
    fail = false;
    w.add("c", "k", rec, T0);
    await w.flush();
    expect(batches).toHaveLength(1);
    // One row (one minute, one set of dimensions) with three requests, after the schema statement.
    const rows = batches[0]!.filter((s) => Array.isArray(s)) as unknown[][];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.slice(6, 7)).toEqual([3]);
    expect(w.rollup.size).toBe(0);
    expect(kept.length).toBe(2);
  });

  it("flushes on its own after the interval", async () => {
    vi.useFakeTimers();
    try {
      const batches: unknown[] = [];
      const db = { prepare: () => ({ bind: () => ({}) }), batch: async (s: unknown[]) => void batches.push(s) } as unknown as D1Database;
      const w = new LedgerWriter(db, 5_000, () => {});
      w.add("a", "k", rec, T0);
      await vi.advanceTimersByTimeAsync(4_999);
      expect(batches).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(batches).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("with no ledger bound, nothing is held", () => {
    const w = new LedgerWriter(undefined, 1_000, () => {});
    expect(w.add("a", "k", rec, T0)).toBe(true);
    expect(w.rollup.size).toBe(0);
  });

  it("USAGE_FLUSH_MS: a number of ms up to 5 minutes, else the default", () => {
    expect(flushMs(undefined)).toBe(FLUSH_MS);
    expect(flushMs("x")).toBe(FLUSH_MS);
    expect(flushMs("-1")).toBe(FLUSH_MS);
    expect(flushMs("250")).toBe(250);
    expect(flushMs("9999999")).toBe(300_000);
  });
});
