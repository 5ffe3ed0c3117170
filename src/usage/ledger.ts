// The ledger in D1: minute rollups written in batches by the limiters, read by GET /admin/usage.
import type { Row } from "./rollup";
import { BATCHES_SCHEMA, keysOf, type LedgerTable, schemaOf, SUMS } from "./schema";

/**
 * Adds one row to its minute's row, unless its batch was written before: the statement reads
 * usage_batches inside the batch's transaction, so a batch sent again after a lost reply adds
 * nothing. (INSERT ... SELECT needs its WHERE before ON CONFLICT, which it has.)
 */
const upsert = (table: LedgerTable) => {
  const keys = keysOf(table);
  const columns = [...keys, ...SUMS];
  return `INSERT INTO ${table} (${columns.join(", ")}) SELECT ${columns.map(() => "?").join(", ")} WHERE NOT EXISTS (SELECT 1 FROM usage_batches WHERE id = ?) ON CONFLICT (${keys.join(", ")}) DO UPDATE SET ${SUMS.map((s) => `${s} = ${s} + excluded.${s}`).join(", ")}`;
};

/** A row's values in its table's column order (the sync table's carry the tier after the model). */
const valuesOf = (table: LedgerTable, r: Row) => [
  r.minute, r.key, r.caller, r.virtualKey, r.pool, r.model, ...(table === "sync_usage" ? [r.tier] : []),
  r.requests, r.unknown, r.unpriced, r.input, r.output, r.cached, r.cacheWrite, r.costUsd,
];
const DONE = "INSERT OR IGNORE INTO usage_batches (id, at) VALUES (?, ?)";
const PRUNE = "DELETE FROM usage_batches WHERE at < ?";
/** How long a batch id is remembered: far longer than any retry of a limiter's write (seconds). */
export const BATCH_ID_KEPT_MS = 86_400_000;

/** The tables this isolate has made sure exist, per database (a deploy need not run the migrations first). */
const readyIn = new WeakMap<D1Database, Set<LedgerTable>>();

/**
 * One batch, one round trip, one transaction: each row adds to its minute's row, once per batch
 * id however often it is sent; then the id is noted and ids older than a day are forgotten.
 */
export async function writeRows(db: D1Database, rows: readonly Row[], batchId: string, now: number, table: LedgerTable = "sync_usage"): Promise<void> {
  if (rows.length === 0) return;
  const up = db.prepare(upsert(table));
  const stmts = rows.map((r) => up.bind(...valuesOf(table, r), batchId));
  stmts.push(db.prepare(DONE).bind(batchId, now), db.prepare(PRUNE).bind(now - BATCH_ID_KEPT_MS));
  let ready = readyIn.get(db);
  if (!ready) readyIn.set(db, (ready = new Set()));
  if (!ready.has(table)) stmts.unshift(db.prepare(schemaOf(table)), db.prepare(BATCHES_SCHEMA));
  await db.batch(stmts);
  ready.add(table);
}

/**
 * A row's dimensions as GET /admin/usage names them; `mode` is `sync` (sync_usage, and the usage
 * table before it) or `batch` (batch_usage); `tier` the service tier that served (`batch` for a
 * provider batch's rows; none for rows from before tiers).
 */
export const DIMENSIONS = { caller: "caller", virtualKey: "virtual_key", model: "model", key: "key", pool: "pool", mode: "mode", tier: "tier" } as const;
export type Dimension = keyof typeof DIMENSIONS;
export type Mode = "sync" | "batch";

export interface UsageFigures {
  requests: number;
  unknownUsage: number;
  unpricedRequests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
}

/** Each sum under its JSON name. */
const NAMES = ["requests", "unknownUsage", "unpricedRequests", "inputTokens", "outputTokens", "cachedTokens", "cacheWriteTokens", "costUsd"];
const SELECT = SUMS.map((s, i) => `SUM(${s}) AS ${NAMES[i]}`).join(", ");

/** Each table as the ledger reads it: its mode, and its tier (a column, a constant, or none). */
const READ = {
  sync_usage: { mode: "sync", tier: "tier" },
  usage: { mode: "sync", tier: "NULL" },
  batch_usage: { mode: "batch", tier: "'batch'" },
} as const;
type Read = keyof typeof READ;

/**
 * Rows per minute (and per `by`), at most `limit` of them, oldest first; the range's totals; and
 * with `by`, the range's totals per value of it (`groups`, the costliest first, at most `limit`).
 * Every table is read as one, each row tagged with its mode and tier; a ledger made before a table
 * existed (or with no table yet) is read as it is.
 */
export async function queryUsage(db: D1Database, since: number, until: number, by: Dimension | null, limit: number, mode: Mode | null = null) {
  const have = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('usage', 'sync_usage', 'batch_usage') ORDER BY name DESC").all<{ name: Read }>();
  const tables = have.results.map((r) => r.name);
  return tables.length ? query(db, since, until, by, limit, mode, tables) : { rows: [], totals: null, groups: [] };
}

async function query(db: D1Database, since: number, until: number, by: Dimension | null, limit: number, mode: Mode | null, tables: Read[]) {
  const cols = `minute, key, caller, virtual_key, pool, model, ${SUMS.join(", ")}`;
  const from = `(${tables.map((t) => `SELECT ${cols}, ${READ[t].tier} AS tier, '${READ[t].mode}' AS mode FROM ${t}`).join(" UNION ALL ")})`;
  const where = `WHERE minute >= ? AND minute < ?${mode ? " AND mode = ?" : ""}`;
  const args = mode ? [since, until, mode] : [since, until];
  const col = by ? DIMENSIONS[by] : null;
  const dim = col ? `, ${col} AS dim` : "";
  const rows = await db
    .prepare(`SELECT minute${dim}, ${SELECT} FROM ${from} ${where} GROUP BY minute${col ? ", dim" : ""} ORDER BY minute${col ? ", dim" : ""} LIMIT ?`)
    .bind(...args, limit + 1)
    .all<{ minute: number; dim?: string } & UsageFigures>();
  const totals = await db.prepare(`SELECT ${SELECT} FROM ${from} ${where}`).bind(...args).first<UsageFigures>();
  const groups = col
    ? (await db.prepare(`SELECT ${col} AS dim, ${SELECT} FROM ${from} ${where} GROUP BY dim ORDER BY costUsd DESC, requests DESC, dim LIMIT ?`).bind(...args, limit).all<{ dim: string } & UsageFigures>()).results
    : [];
  return { rows: rows.results, totals, groups };
}

/** `no such table`: nothing was ever written (a fresh database), so there is nothing to show. */
export const isEmptyLedger = (err: unknown) => /no such table/i.test(String(err));
