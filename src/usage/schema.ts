// The ledger's one table, apart from the code that writes it, so the migration test can read it anywhere.

/** The dimensions of a row (its primary key), then its sums: SQL column and Row field. */
export const KEYS = ["minute", "key", "caller", "virtual_key", "pool", "model"];
export const SUMS = ["requests", "unknown", "unpriced", "input", "output", "cached", "cache_write", "cost_usd"];

/** The ledger's table; migrations/0001_usage.sql holds the same statement (a test keeps them equal). */
export const SCHEMA = `CREATE TABLE IF NOT EXISTS usage (${KEYS.map((k, i) => `${k} ${i ? "TEXT" : "INTEGER"} NOT NULL`)
  .concat(SUMS.map((s) => `${s} ${s === "cost_usd" ? "REAL" : "INTEGER"} NOT NULL`))
  .join(", ")}, PRIMARY KEY (${KEYS.join(", ")}))`;
