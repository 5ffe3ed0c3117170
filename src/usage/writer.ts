// A limiter's side of the ledger: it gathers its answers' records in minute rollups and writes
// them to D1 in one batch every USAGE_FLUSH_MS, never on a request's path.
import { writeRows } from "./ledger";
import type { UsageRecord } from "./types";
import { Rollup } from "./rollup";

/** Default USAGE_FLUSH_MS: how long records wait in the object before their batch is written. */
export const FLUSH_MS = 10_000;
/** After a failed write the rows are kept and tried again this much later. */
const RETRY_MS = 30_000;

export function flushMs(raw: string | undefined): number {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(n) && n >= 0 ? Math.min(n, 300_000) : FLUSH_MS;
}

export class LedgerWriter {
  readonly rollup = new Rollup();
  private db: D1Database | undefined;
  private everyMs: number;
  private waitUntil: (p: Promise<unknown>) => void;
  /** A pending timer holds the object in memory, so gathered rows are written before it can be evicted. */
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(db: D1Database | undefined, everyMs: number, waitUntil: (p: Promise<unknown>) => void) {
    this.db = db;
    this.everyMs = everyMs;
    this.waitUntil = waitUntil;
  }

  /** Returns false for a record already counted, so the caller counts it once. Unbound ledger: nothing is kept. */
  add(id: string, key: string, r: UsageRecord, at: number): boolean {
    if (!this.rollup.add(id, key, r, at)) return false;
    if (!this.db) this.rollup.take();
    else this.schedule(this.everyMs);
    return true;
  }

  /** Writes what was gathered now; a failed write keeps its rows for the next try. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.rollup.take();
    if (!this.db || rows.length === 0) return Promise.resolve();
    const write = writeRows(this.db, rows).catch(() => {
      this.rollup.putBack(rows);
      this.schedule(RETRY_MS);
    });
    this.waitUntil(write);
    return write;
  }

  private schedule(ms: number): void {
    this.timer ??= setTimeout(() => void this.flush(), ms);
  }
}
