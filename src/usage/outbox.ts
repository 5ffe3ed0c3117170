// A limiter's outbox: each answer's usage record, written to the object's own SQLite storage in
// the turn it arrives (so the output gate commits it before the object answers anything else),
// kept until the ledger has it. One row per lease id: a record sent again is not kept twice.
import type { Batch } from "./flush";
import type { Dated } from "./rollup";
import type { UsageRecord } from "./types";

/**
 * WITHOUT ROWID: the lease id is the table's only index, so a record costs one row written when it
 * comes and one when its batch is done. That is acceptable: the 2xx it comes with already writes
 * the key's state rows in the same turn (one commit), and the ledger is worth more than a row.
 * `seq` orders the records; a batch is a range of it, so opening one writes one row, not one per record.
 */
const TABLES = [
  "CREATE TABLE IF NOT EXISTS usage_outbox (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, at INTEGER NOT NULL, key TEXT NOT NULL, record TEXT NOT NULL) WITHOUT ROWID",
  // At most one row: the open batch, so a restart sends the same id with the same records.
  "CREATE TABLE IF NOT EXISTS usage_batch (id TEXT PRIMARY KEY, last INTEGER NOT NULL)",
];

export class Outbox {
  /** Records held, in the open batch or not. */
  size = 0;
  /** The batch written or being written; it stays until D1 has answered. */
  open: Batch | null = null;
  #sql: SqlStorage;
  #seq = 0;
  #ready = false;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Reads what a previous life left; read-only, so a key that never had usage gets no tables. Returns when the oldest record was made. */
  load(): number | null {
    const sql = this.#sql;
    this.#ready = sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('usage_outbox', 'usage_batch')").one().n === 2;
    if (!this.#ready) return null;
    const held = sql.exec<{ n: number; seq: number | null; at: number | null }>("SELECT count(*) AS n, max(seq) AS seq, min(at) AS at FROM usage_outbox").one();
    this.size = held.n;
    this.#seq = held.seq ?? 0;
    this.open = sql.exec<{ id: string; last: number }>("SELECT id, last FROM usage_batch").toArray()[0] ?? null;
    return held.at;
  }

  /** Keeps one record; false if its lease's record is already held. */
  put(id: string, key: string, record: UsageRecord, at: number): boolean {
    if (!this.#ready) for (const t of TABLES) this.#sql.exec(t);
    this.#ready = true;
    const c = this.#sql.exec("INSERT OR IGNORE INTO usage_outbox (id, seq, at, key, record) VALUES (?, ?, ?, ?, ?)", id, this.#seq + 1, at, key, JSON.stringify(record));
    c.toArray();
    if (c.rowsWritten === 0) return false;
    this.#seq++;
    this.size++;
    return true;
  }

  /** The last record's sequence number. */
  get last(): number {
    return this.#seq;
  }

  /** The records held that came after sequence number `seq`, in order. */
  since(seq: number): UsageRecord[] {
    if (!this.#ready) return [];
    return this.#sql.exec<{ record: string }>("SELECT record FROM usage_outbox WHERE seq > ? ORDER BY seq", seq).toArray().map((r) => JSON.parse(r.record) as UsageRecord);
  }

  /** The sequence number of the n-th oldest record held (all of them: the last one, with no scan). */
  lastOf(n: number): number {
    if (n >= this.size) return this.#seq;
    return this.#sql.exec<{ seq: number }>("SELECT seq FROM usage_outbox ORDER BY seq LIMIT 1 OFFSET ?", n - 1).one().seq;
  }

  /** Opens a batch: written before the first try, so every try sends the same id. */
  begin(batch: Batch): void {
    this.#sql.exec("INSERT INTO usage_batch (id, last) VALUES (?, ?)", batch.id, batch.last);
    this.open = batch;
  }

  /** The records a batch carries. */
  records(batch: Batch): Dated[] {
    return this.#sql
      .exec<{ key: string; at: number; record: string }>("SELECT key, at, record FROM usage_outbox WHERE seq <= ?", batch.last)
      .toArray()
      .map((r) => ({ key: r.key, at: r.at, record: JSON.parse(r.record) as UsageRecord }));
  }

  /** D1 has the batch: its records and the batch go. */
  done(batch: Batch): void {
    this.size -= this.#remove(batch.last);
    this.#sql.exec("DELETE FROM usage_batch WHERE id = ?", batch.id);
    this.open = null;
  }

  /** Lets the `n` oldest records go (the ledger could not be written for too long). Returns how many went. */
  drop(n: number): number {
    if (n <= 0 || this.size === 0) return 0;
    const gone = this.#remove(this.lastOf(Math.min(n, this.size)));
    this.size -= gone;
    return gone;
  }

  #remove(last: number): number {
    const c = this.#sql.exec("DELETE FROM usage_outbox WHERE seq <= ?", last);
    c.toArray();
    return c.rowsWritten;
  }
}
