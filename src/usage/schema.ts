// The ledger's tables, apart from the code that writes them, so the migration test can read them anywhere.

/** The dimensions of a row (its primary key), then its sums: SQL column and Row field. */
export const KEYS = ["minute", "key", "caller", "virtual_key", "pool", "model"];
export const SUMS = ["requests", "unknown", "unpriced", "input", "output", "cached", "cache_write", "cost_usd"];

/**
 * `sync_usage`: answers of synchronous requests, by the service tier that served them (issue 35);
 * `batch_usage`: provider batches' result lines (at batch prices). `usage` is the synchronous
 * table from before tiers: still read (its rows have no tier), no longer written.
 */
export type LedgerTable = "sync_usage" | "batch_usage";
type Table = LedgerTable | "usage";

/** A table's dimensions: the sync table's add the tier, last. */
export const keysOf = (table: Table) => (table === "sync_usage" ? [...KEYS, "tier"] : KEYS);

/** A ledger table; migrations/0001_usage.sql, 0003_batch_usage.sql and 0004_sync_usage.sql hold the same statements (a test keeps them equal). */
export const schemaOf = (table: Table) => {
  const keys = keysOf(table);
  return `CREATE TABLE IF NOT EXISTS ${table} (${keys.map((k, i) => `${k} ${i ? "TEXT" : "INTEGER"} NOT NULL`)
    .concat(SUMS.map((s) => `${s} ${s === "cost_usd" ? "REAL" : "INTEGER"} NOT NULL`))
    .join(", ")}, PRIMARY KEY (${keys.join(", ")}))`;
};
export const SCHEMA = schemaOf("usage");

/**
 * The batches already written (id, epoch ms), so a batch sent again (its reply was lost) adds
 * nothing; kept a day. migrations/0002_usage_batches.sql holds the same statement.
 */
export const BATCHES_SCHEMA = "CREATE TABLE IF NOT EXISTS usage_batches (id TEXT PRIMARY KEY, at INTEGER NOT NULL)";

/** Each migration's statements, in order: what a fresh database gets from `wrangler d1 migrations apply`. */
export const MIGRATIONS: Record<string, string[]> = {
  "0001_usage.sql": [SCHEMA],
  "0002_usage_batches.sql": [BATCHES_SCHEMA],
  "0003_batch_usage.sql": [schemaOf("batch_usage")],
  "0004_sync_usage.sql": [schemaOf("sync_usage")],
};
