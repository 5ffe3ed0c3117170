// A limiter's side of the ledger: each answer's record goes to its outbox as it arrives, and the
// pending records go to D1 in one idempotent batch every USAGE_FLUSH_MS, never on a request's path.
// The Limiter runs the writes from its alarm; this decides nothing about time itself.
import { failed, flushDue, IDLE, nextBatch, overflow, received, type Schedule, taken, written } from "./flush";
import { writeRows } from "./ledger";
import type { LedgerTable } from "./schema";
import { Outbox } from "./outbox";
import { RecentIds } from "./recent";
import { rollUp } from "./rollup";
import type { UsageRecord } from "./types";

/** Default USAGE_FLUSH_MS: how long records wait in the object before their batch is written. */
export const FLUSH_MS = 10_000;
/** Records held while the ledger cannot be written; past it the oldest go (and are counted). */
export const PENDING_MAX = 100_000;
/** One trim goes this share of the cap below it (1,000 records at PENDING_MAX). */
const TRIM_SHARE = 0.01;

export function flushMs(raw: string | undefined): number {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(n) && n >= 0 ? Math.min(n, 300_000) : FLUSH_MS;
}

export class LedgerWriter {
  /** The ledger; undefined: none bound, and records are only counted, never kept. Tests replace it. */
  db: D1Database | undefined;
  /** Records let go because PENDING_MAX was reached. */
  dropped = 0;
  private outbox: Outbox;
  private recent = new RecentIds();
  private schedule: Schedule;
  private everyMs: number;
  private pendingMax: number;
  private writing: Promise<void> | null = null;
  /** The ledger's table the rows go to: `sync_usage`, or `batch_usage` for provider batches' results. */
  private table: LedgerTable;

  constructor(db: D1Database | undefined, sql: SqlStorage, everyMs: number, pendingMax = PENDING_MAX, table: LedgerTable = "sync_usage") {
    this.db = db;
    this.table = table;
    this.everyMs = everyMs;
    this.pendingMax = pendingMax;
    this.outbox = new Outbox(sql);
    const oldest = this.outbox.load();
    // Records a previous life left are due at once (their wait began before it ended).
    this.schedule = oldest === null ? IDLE : received(IDLE, oldest);
  }

  /** Records held until the ledger has them. */
  get pending(): number {
    return this.outbox.size;
  }

  /**
   * Keeps one answer's record (made at `at`). Returns false for a lease already counted, so the
   * caller counts it once: by the recent ids, and while it is pending by its outbox row.
   */
  add(id: string, key: string, r: UsageRecord, at: number): boolean {
    if (!this.recent.add(id)) return false;
    if (!this.db) return true;
    if (!this.outbox.put(id, key, r, at)) return false;
    this.schedule = received(this.schedule, at);
    this.dropped += this.outbox.drop(overflow(this.outbox.size, this.pendingMax, Math.ceil(this.pendingMax * TRIM_SHARE)));
    return true;
  }

  /** The sequence number of the last record kept: records after it are newer than a count saved with it. */
  get seq(): number {
    return this.outbox.last;
  }

  /** The records still held that were kept after `seq` (a count saved before them must add them). */
  since(seq: number): UsageRecord[] {
    return this.outbox.since(seq);
  }

  /** When the next write is due (epoch ms; past means now); null: nothing waits. */
  due(): number | null {
    return this.writing ? null : flushDue(this.schedule, this.outbox.size, this.everyMs);
  }

  /**
   * Writes the open batch, or a new one of the pending records, now. Only once D1 has answered do
   * its records leave the outbox; a failed try keeps them, and the batch, for the next.
   */
  flush(now: number): Promise<void> {
    this.writing ??= this.write(now).finally(() => (this.writing = null));
    return this.writing;
  }

  private async write(now: number): Promise<void> {
    const db = this.db;
    const next = db ? nextBatch(this.outbox.open, this.outbox.size, (n) => this.outbox.lastOf(n), () => crypto.randomUUID()) : null;
    if (!db || !next) return;
    const { batch, cut } = next;
    if (batch !== this.outbox.open) {
      this.outbox.begin(batch);
      this.schedule = taken(this.schedule, cut);
    }
    try {
      await writeRows(db, rollUp(this.outbox.records(batch)), batch.id, now, this.table);
      this.outbox.done(batch);
      this.schedule = written(this.schedule);
    } catch {
      this.schedule = failed(this.schedule, now);
    }
  }
}
