// A Limiter's storage: its state rows, its lease journal and the alarm that sweeps its leases.
// Nothing is written for a key until it is proven (its first 2xx, or an operator's config): until
// then its sweep is an in-memory timer, and a stranger's keys cost no storage.
import type { Lease, Outcome } from "./state";

/** Metrics-only changes are written at most this often; learned limits and gates at once. */
const FLUSH_MS = 1_000;

/**
 * Whether an answer proves its key: a 2xx. A pool member that goes out is kept too (listed in GET
 * /admin/pools) even if it never answered 2xx; any other answer (a holder's 404 for a made-up
 * model) keeps nothing.
 */
export function proves(o: Pick<Outcome, "status" | "pooled" | "out">): boolean {
  return (o.status >= 200 && o.status < 300) || (o.pooled === true && o.out !== undefined);
}

/** A lease row. `unused`: a ticket no request has used yet (null in a row written before the column). */
export interface LeaseRow {
  id: string;
  cost: number;
  expires: number;
  unused: boolean | null;
}

export interface Loaded {
  /** The state rows (`core`, `meta`, `counters`, `samples`, `lastSeen`, `epoch`, `tickets`), as stored. */
  rows: Map<string, string>;
  leases: LeaseRow[];
}

export class LimiterStore {
  /** Whether anything is kept for this key (see the file's head). */
  proven = false;
  #storage: DurableObjectStorage;
  #sql: SqlStorage;
  #rows: () => [string, string][];
  #used: () => Lease[];
  #fire: () => void;
  #now: () => number;
  /** When the sweep is due (stored alarm or timer), and the timer of a key not yet proven. */
  #alarmAt: number | null = null;
  #sweepTimer: ReturnType<typeof setTimeout> | null = null;
  /** Lease rows to write (a lease) or delete (null) at the next flush, and the ids already written. */
  #pending = new Map<string, Lease | null>();
  #stored = new Set<string>();
  #flushTimer: ReturnType<typeof setTimeout> | null = null;

  /**
   * `rows`: the state rows to write at a save, made when it happens; `used`: the tickets used since
   * the last save (their rows say so in the same commit as the windows that charged them); `fire`: the sweep.
   */
  constructor(storage: DurableObjectStorage, rows: () => [string, string][], used: () => Lease[], fire: () => void, now: () => number) {
    this.#storage = storage;
    this.#sql = storage.sql;
    this.#rows = rows;
    this.#used = used;
    this.#fire = fire;
    this.#now = now;
  }

  /** Reads what was kept; read-only, so a key never proven gets no tables. */
  load(): Loaded {
    const sql = this.#sql;
    const tables = sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('state', 'leases')").one().n === 2;
    if (!tables) return { rows: new Map(), leases: [] };
    const rows = new Map(sql.exec<{ k: string; v: string }>("SELECT k, v FROM state").toArray().map((r) => [r.k, r.v]));
    this.#addUnused();
    const leases = sql.exec<{ id: string; cost: number; expires: number; unused: number | null }>("SELECT id, cost, expires, unused FROM leases").toArray()
      .map((l) => ({ ...l, unused: l.unused === null ? null : l.unused === 1 }));
    for (const l of leases) this.#stored.add(l.id);
    this.proven = rows.has("core");
    return { rows, leases };
  }

  /** The `unused` column, added to a table made before it (its rows read null: as a ticket, as they were restored then). */
  #addUnused(): void {
    const has = this.#sql.exec<{ n: number }>("SELECT count(*) AS n FROM pragma_table_info('leases') WHERE name = 'unused'").one().n > 0;
    if (!has) this.#sql.exec("ALTER TABLE leases ADD COLUMN unused INTEGER");
  }

  /** From now on this key is kept. Returns whether it was not already. */
  prove(): boolean {
    if (this.proven) return false;
    // The sweep pending as a timer becomes a stored alarm.
    const at = this.#alarmAt;
    this.idle();
    this.proven = true;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS state (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
    this.#sql.exec("CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, cost REAL NOT NULL, expires INTEGER NOT NULL, unused INTEGER)");
    if (at !== null) this.arm(at);
    return true;
  }

  /** Per grant: only a sweep later than this lease's expiry (or none) needs moving. O(1). */
  arm(at: number): void {
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    if (this.proven) {
      void this.#storage.setAlarm(at);
      return;
    }
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    this.#sweepTimer = setTimeout(this.#fire, Math.max(0, at - this.#now()));
  }

  /** The sweep ran. */
  fired(): void {
    this.#alarmAt = null;
  }

  /** Nothing is held: a key not yet proven drops its timer (a pending timer keeps its object in memory). */
  idle(): void {
    if (this.proven) return;
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    this.#sweepTimer = null;
    this.#alarmAt = null;
  }

  /** A lease held (granted, taken back on renewal, a ticket issued): journalled, and its sweep armed. */
  keep(lease: Lease): void {
    this.journal(lease.id, lease);
    this.arm(lease.expiresAt);
  }

  /**
   * Lease rows are written with the next flush, not per grant: a reply waits for its writes to
   * commit, and most leases live shorter than a flush. A restart loses at most one flush of them.
   */
  journal(id: string, lease: Lease | null): void {
    if (lease === null && !this.#stored.has(id)) this.#pending.delete(id);
    else this.#pending.set(id, lease);
    this.scheduleFlush();
  }

  /** Writes the journal and the state rows now (a proven key only). */
  save(): void {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = null;
    if (!this.proven) return;
    const sql = this.#sql;
    // A ticket used since its row was written is written again: a restart counts it once.
    for (const lease of this.#used()) if (this.#stored.has(lease.id) && !this.#pending.has(lease.id)) this.#pending.set(lease.id, lease);
    for (const [id, lease] of this.#pending) {
      if (lease) sql.exec("INSERT OR REPLACE INTO leases (id, cost, expires, unused) VALUES (?, ?, ?, ?)", id, lease.cost, lease.expiresAt, lease.ticket !== undefined ? 1 : 0);
      else sql.exec("DELETE FROM leases WHERE id = ?", id);
      if (lease) this.#stored.add(id);
      else this.#stored.delete(id);
    }
    this.#pending.clear();
    for (const [k, v] of this.#rows()) this.saveRow(k, v);
  }

  /** One state row now, in this turn's commit (a proven key only). */
  saveRow(k: string, v: string): void {
    if (this.proven) this.#sql.exec("INSERT OR REPLACE INTO state (k, v) VALUES (?, ?)", k, v);
  }

  /** After a change: a new limit or a later gate (`urgent`) is written at once; quotas and counters go with the next flush. */
  changed(urgent: boolean): void {
    if (urgent) this.save();
    else this.scheduleFlush();
  }

  /** A change that can wait for the next flush (at most FLUSH_MS). */
  scheduleFlush(): void {
    if (this.proven) this.#flushTimer ??= setTimeout(() => this.save(), FLUSH_MS);
  }
}
