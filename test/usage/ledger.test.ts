import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BATCH_ID_KEPT_MS, queryUsage, writeRows } from "../../src/usage/ledger";
import { SCHEMA } from "../../src/usage/schema";
import type { Row } from "../../src/usage/rollup";
import { FLUSH_MS, flushMs } from "../../src/usage/writer";

const T0 = Date.UTC(2030, 0, 1, 0, 0);
const NOW = Date.UTC(2030, 0, 1, 0, 5);
const row = (o: Partial<Row> = {}): Row => ({
  minute: T0, key: "openai:m:1", caller: "", virtualKey: "", pool: "", model: "m", tier: "standard",
  requests: 1, unknown: 0, unpriced: 0, input: 10, output: 2, cached: 1, cacheWrite: 0, costUsd: 0.5, ...o,
});

describe("the ledger by tier (issue 35)", () => {
  it("keeps a row per tier that served; reads the table from before tiers (no tier) and a provider batch's rows (batch) beside it", async () => {
    const db = env.LEDGER!;
    const t = Date.UTC(2031, 0, 1, 0, 0);
    const key = "openai:gpt-5-mini:tiers";
    await writeRows(db, [row({ minute: t, key, tier: "flex", costUsd: 0.25 }), row({ minute: t, key, tier: "standard", costUsd: 0.5 })], "tiers-1", NOW);
    await writeRows(db, [row({ minute: t, key, tier: "flex", costUsd: 0.25 })], "tiers-2", NOW);
    await writeRows(db, [row({ minute: t, key, tier: "flex", costUsd: 0.125 })], "tiers-3", NOW, "batch_usage");
    await db.exec(SCHEMA);
    await db.prepare("INSERT INTO usage VALUES (?, ?, '', '', '', 'm', 1, 0, 0, 10, 2, 1, 0, 1)").bind(t, key).run();
    const byTier = await queryUsage(db, t, t + 60_000, "tier", 100);
    expect(byTier.rows.map((r) => [r.dim, r.requests, r.costUsd])).toEqual([[null, 1, 1], ["batch", 1, 0.125], ["flex", 2, 0.5], ["standard", 1, 0.5]]);
    expect((await queryUsage(db, t, t + 60_000, "mode", 100)).rows.map((r) => [r.dim, r.requests])).toEqual([["batch", 1], ["sync", 4]]);
  });
});

describe("the ledger in D1", () => {
  it("a row written twice adds up; rows of other dimensions stay apart; queries group by one", async () => {
    const db = env.LEDGER!;
    await writeRows(db, [row(), row({ caller: "a" })], "add-1", NOW);
    await writeRows(db, [row(), row({ minute: T0 + 60_000, caller: "a", costUsd: 0.25 })], "add-2", NOW);
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

  it("a batch sent again (its reply was lost) is counted once; another batch adds; ids are forgotten after a day", async () => {
    const db = env.LEDGER!;
    const key = "openai:m:batches";
    const requests = async () => (await db.prepare("SELECT sum(requests) AS n FROM sync_usage WHERE key = ?").bind(key).first<{ n: number }>())!.n;
    const rows = [row({ key }), row({ key, caller: "b" })];
    await writeRows(db, rows, "batch-1", NOW);
    await writeRows(db, rows, "batch-1", NOW + 30_000);
    expect(await requests()).toBe(2);
    await writeRows(db, [row({ key })], "batch-2", NOW + 60_000);
    expect(await requests()).toBe(3);
    // A day later, both ids are pruned by the next batch's write (and that batch is counted).
    await writeRows(db, [row({ key })], "batch-3", NOW + 60_000 + BATCH_ID_KEPT_MS + 1);
    const ids = await db.prepare("SELECT id FROM usage_batches WHERE id LIKE 'batch-%' ORDER BY id").all<{ id: string }>();
    expect(ids.results.map((r) => r.id)).toEqual(["batch-3"]);
    expect(await requests()).toBe(4);
  });
});

describe("USAGE_FLUSH_MS", () => {
  it("a number of ms up to 5 minutes, else the default", () => {
    expect(flushMs(undefined)).toBe(FLUSH_MS);
    expect(flushMs("x")).toBe(FLUSH_MS);
    expect(flushMs("-1")).toBe(FLUSH_MS);
    expect(flushMs("250")).toBe(250);
    expect(flushMs("9999999")).toBe(300_000);
  });
});
