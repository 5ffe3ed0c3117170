// Minute rollups of usage records, as a key's limiter gathers them between two writes to the
// ledger. Pure: time comes in as an argument.
import type { UsageRecord } from "./types";

/** One ledger row: a minute of one key, caller, virtual key, pool and model ("" where there is none). */
export interface Row {
  /** Epoch ms of the minute's start. */
  minute: number;
  key: string;
  caller: string;
  virtualKey: string;
  pool: string;
  model: string;
  requests: number;
  /** Answers that carried no usage. */
  unknown: number;
  /** Answers with usage but no price for their model. */
  unpriced: number;
  input: number;
  output: number;
  cached: number;
  cacheWrite: number;
  costUsd: number;
}

export const MINUTE_MS = 60_000;
/** Lease ids remembered, so a record carried twice (a retried call) is counted once. */
const RECENT_IDS = 4_096;
/** Rows held while the ledger cannot be written; past it the oldest minutes go (and are counted). */
export const ROWS_MAX = 10_000;

const DIMS = ["minute", "key", "caller", "virtualKey", "pool", "model"] as const;
const SUMS = ["requests", "unknown", "unpriced", "input", "output", "cached", "cacheWrite", "costUsd"] as const;

const rowId = (r: Pick<Row, (typeof DIMS)[number]>) => DIMS.map((d) => r[d]).join("\n");

export class Rollup {
  private rows = new Map<string, Row>();
  private recent = new Set<string>();
  /** Rows dropped because ROWS_MAX was reached. */
  dropped = 0;

  get size(): number {
    return this.rows.size;
  }

  /** Answers gathered and not yet taken. */
  get requests(): number {
    let n = 0;
    for (const r of this.rows.values()) n += r.requests;
    return n;
  }

  /** Adds one answer's record, made at `at` (epoch ms). Returns false if this lease was already counted. */
  add(id: string, key: string, r: UsageRecord, at: number): boolean {
    if (this.recent.has(id)) return false;
    this.recent.add(id);
    if (this.recent.size > RECENT_IDS) this.recent.delete(this.recent.values().next().value as string);
    const t = r.tokens;
    this.merge({
      minute: Math.floor(at / MINUTE_MS) * MINUTE_MS, key, caller: r.caller ?? "", virtualKey: r.virtualKey ?? "", pool: r.pool ?? "", model: r.model,
      requests: 1, unknown: t ? 0 : 1, unpriced: t && r.costUsd === null ? 1 : 0,
      input: t?.input ?? 0, output: t?.output ?? 0, cached: t?.cached ?? 0, cacheWrite: t?.cacheWrite ?? 0, costUsd: r.costUsd ?? 0,
    });
    return true;
  }

  /** Everything gathered, emptied. */
  take(): Row[] {
    const out = [...this.rows.values()];
    this.rows.clear();
    return out;
  }

  /** Rows a failed write gave back: merged with what came since, within ROWS_MAX. */
  putBack(rows: Row[]): void {
    for (const r of rows) this.merge(r);
  }

  private merge(r: Row): void {
    const id = rowId(r);
    const had = this.rows.get(id);
    if (had) {
      for (const s of SUMS) had[s] += r[s];
      return;
    }
    if (this.rows.size >= ROWS_MAX) {
      // The oldest minute goes: a ledger that cannot be written must not grow without bound.
      const oldest = [...this.rows.entries()].reduce((a, b) => (b[1].minute < a[1].minute ? b : a));
      this.rows.delete(oldest[0]);
      this.dropped += oldest[1].requests;
    }
    this.rows.set(id, { ...r });
  }
}
