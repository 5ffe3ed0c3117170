// The ledger in D1: minute rollups written in batches by the limiters, read by GET /admin/usage.
import type { Row } from "./rollup";
import { KEYS, SCHEMA, SUMS } from "./schema";

const COLUMNS = [...KEYS, ...SUMS];
const UPSERT = `INSERT INTO usage (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ON CONFLICT (${KEYS.join(", ")}) DO UPDATE SET ${SUMS.map((s) => `${s} = ${s} + excluded.${s}`).join(", ")}`;

/** Whether this isolate has made sure the table exists (a deploy need not run the migration first). */
let ready = false;

/** One batch, one round trip: each row adds to its minute's row. */
export async function writeRows(db: D1Database, rows: readonly Row[]): Promise<void> {
  if (rows.length === 0) return;
  const up = db.prepare(UPSERT);
  const stmts = rows.map((r) =>
    up.bind(r.minute, r.key, r.caller, r.virtualKey, r.pool, r.model, r.requests, r.unknown, r.unpriced, r.input, r.output, r.cached, r.cacheWrite, r.costUsd),
  );
  if (!ready) stmts.unshift(db.prepare(SCHEMA));
  await db.batch(stmts);
  ready = true;
}

export const DIMENSIONS = { caller: "caller", virtualKey: "virtual_key", model: "model", key: "key", pool: "pool" } as const;
export type Dimension = keyof typeof DIMENSIONS;

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

/** Rows per minute (and per `by`), at most `limit` of them, oldest first; and the range's totals. */
export async function queryUsage(db: D1Database, since: number, until: number, by: Dimension | null, limit: number) {
  const col = by ? DIMENSIONS[by] : null;
  const dim = col ? `, ${col} AS dim` : "";
  const rows = await db
    .prepare(`SELECT minute${dim}, ${SELECT} FROM usage WHERE minute >= ? AND minute < ? GROUP BY minute${col ? ", dim" : ""} ORDER BY minute${col ? ", dim" : ""} LIMIT ?`)
    .bind(since, until, limit + 1)
    .all<{ minute: number; dim?: string } & UsageFigures>();
  const totals = await db.prepare(`SELECT ${SELECT} FROM usage WHERE minute >= ? AND minute < ?`).bind(since, until).first<UsageFigures>();
  return { rows: rows.results, totals };
}

/** `no such table`: nothing was ever written (a fresh database), so there is nothing to show. */
export const isEmptyLedger = (err: unknown) => /no such table/i.test(String(err));
