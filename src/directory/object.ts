import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { KeyMeta } from "../limiter/types";
import { STATUS_CLASSES, type StatusClass } from "../observe/upstream";

/** What a Limiter reports about itself: who it is and its numbers at the time (ms since epoch). */
export interface DirectoryEntry extends KeyMeta {
  limit: number;
  inFlight: number;
  queued: number;
  lastSeen: number;
}

/** The one Directory instance's name. */
export const DIRECTORY_NAME = "directory";

/** Keys unseen this long drop out of the list (their Limiter keeps its state; traffic re-registers it). */
export const RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/** At most this many rows are kept; past it the least recently seen go first (a flood cannot grow it). */
export const MAX_ROWS = 10_000;

/** At most this many keys are listed at once, newest first. */
export const LIST_MAX = 200;
/** At most this many for a metrics scrape (`recent`): the exposition's label bound. */
export const RECENT_MAX = 1_000;
/**
 * `x-slotgate-limit-key` labels one credential may use (each a limiter of its own, and a row here)
 * within RETENTION_MS; a new one past it is refused, so no caller grows storage without bound.
 */
export const LABELS_PER_CREDENTIAL = 100;

/** Upstream attempts by provider and status class (observe/upstream.ts), since `since`. */
export interface UpstreamCounts {
  provider: string;
  counts: Record<StatusClass, number>;
  /** Epoch ms of the newest batch that counted one. */
  lastAt: number;
}

/** At most this many provider rows (a provider table is config; this only guards the object). */
export const UPSTREAM_PROVIDERS_MAX = 256;
const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

type Row = { key: string; provider: string; model: string; lim: number; in_flight: number; queued: number; last_seen: number };

const toEntry = (r: Row): DirectoryEntry => ({
  key: r.key,
  provider: r.provider,
  model: r.model,
  limit: r.lim,
  inFlight: r.in_flight,
  queued: r.queued,
  lastSeen: r.last_seen,
});

export function directoryOf(ns: DurableObjectNamespace<Directory>): DurableObjectStub<Directory> {
  return ns.get(ns.idFromName(DIRECTORY_NAME));
}

/**
 * Which rate-limit keys exist. Each Limiter reports here when it first sees traffic and then at
 * most every few seconds, from inside the object, so the Worker's request path never waits on it.
 * It holds hashes only: a key names provider, model and the credential's hash, never the credential.
 */
export class Directory extends DurableObject<Env> {
  private prunedAt = 0;
  /** The row cap; tests lower it. */
  maxRows = MAX_ROWS;
  /** Rows held, counted once and then kept up to date; null: count again. */
  private rows: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(
      `CREATE TABLE IF NOT EXISTS keys (
        key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
        lim INTEGER NOT NULL, in_flight INTEGER NOT NULL, queued INTEGER NOT NULL,
        first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL)`,
    );
    sql.exec("CREATE INDEX IF NOT EXISTS keys_last_seen ON keys (last_seen DESC)");
    sql.exec(
      `CREATE TABLE IF NOT EXISTS upstream (
        provider TEXT NOT NULL, class TEXT NOT NULL, n INTEGER NOT NULL, first_at INTEGER NOT NULL, last_at INTEGER NOT NULL,
        PRIMARY KEY (provider, class))`,
    );
    sql.exec("CREATE TABLE IF NOT EXISTS labels (cred TEXT NOT NULL, label TEXT NOT NULL, last_seen INTEGER NOT NULL, PRIMARY KEY (cred, label)) WITHOUT ROWID");
  }

  /**
   * Adds a Worker isolate's counts (one call per isolate per window). Rows are provider x class:
   * anything else (a class that is not one of the five, a name no provider table allows, a row past
   * the bound) is dropped, so nothing sent here can grow it without bound.
   */
  async countUpstream(counts: [provider: string, cls: string, n: number][], at: number): Promise<void> {
    const sql = this.ctx.storage.sql;
    const providers = new Set(sql.exec<{ provider: string }>("SELECT DISTINCT provider FROM upstream").toArray().map((r) => r.provider));
    for (const [provider, cls, n] of counts.slice(0, UPSTREAM_PROVIDERS_MAX * STATUS_CLASSES.length)) {
      if (!(STATUS_CLASSES as readonly string[]).includes(cls) || !PROVIDER_NAME.test(provider) || !Number.isSafeInteger(n) || n <= 0) continue;
      if (!providers.has(provider) && providers.size >= UPSTREAM_PROVIDERS_MAX) continue;
      providers.add(provider);
      sql.exec(
        `INSERT INTO upstream (provider, class, n, first_at, last_at) VALUES (?1, ?2, ?3, ?4, ?4)
         ON CONFLICT (provider, class) DO UPDATE SET n = n + excluded.n, last_at = max(last_at, excluded.last_at)`,
        provider, cls, n, at,
      );
    }
  }

  /** Every provider's counts, by name; `since`: when the first was counted (null: none yet). */
  async upstream(): Promise<{ since: number | null; providers: UpstreamCounts[] }> {
    const rows = this.ctx.storage.sql
      .exec<{ provider: string; class: StatusClass; n: number; first_at: number; last_at: number }>("SELECT * FROM upstream ORDER BY provider")
      .toArray();
    const byName = new Map<string, UpstreamCounts>();
    let since: number | null = null;
    for (const r of rows) {
      let p = byName.get(r.provider);
      if (!p) byName.set(r.provider, (p = { provider: r.provider, counts: Object.fromEntries(STATUS_CLASSES.map((c) => [c, 0])) as Record<StatusClass, number>, lastAt: 0 }));
      p.counts[r.class] = r.n;
      p.lastAt = Math.max(p.lastAt, r.last_at);
      since = since === null ? r.first_at : Math.min(since, r.first_at);
    }
    return { since, providers: [...byName.values()] };
  }

  /**
   * Whether credential `cred` (`provider:hash`) may use `label`: one it used within RETENTION_MS,
   * or a new one while it has fewer than LABELS_PER_CREDENTIAL. Writes nothing: a label is kept
   * only once its credential has been answered (admitLabel), so a stranger's keys cost no storage.
   */
  async mayUseLabel(cred: string, label: string, now: number): Promise<boolean> {
    const sql = this.ctx.storage.sql;
    const cutoff = now - RETENTION_MS;
    if (sql.exec("SELECT 1 FROM labels WHERE cred = ? AND label = ? AND last_seen >= ?", cred, label, cutoff).toArray().length > 0) return true;
    return sql.exec<{ n: number }>("SELECT count(*) AS n FROM labels WHERE cred = ? AND last_seen >= ?", cred, cutoff).one().n < LABELS_PER_CREDENTIAL;
  }

  /**
   * Keeps `label` for credential `cred` (`provider:hash`), which the provider has answered: one it
   * used within RETENTION_MS is seen again now, a new one is kept while it has fewer than
   * LABELS_PER_CREDENTIAL. Whether it was (or is) kept.
   */
  async admitLabel(cred: string, label: string, now: number): Promise<boolean> {
    const sql = this.ctx.storage.sql;
    this.prune(now);
    if (sql.exec("UPDATE labels SET last_seen = ? WHERE cred = ? AND label = ?", now, cred, label).rowsWritten > 0) return true;
    const n = sql.exec<{ n: number }>("SELECT count(*) AS n FROM labels WHERE cred = ?", cred).one().n;
    if (n >= LABELS_PER_CREDENTIAL) return false;
    sql.exec("INSERT INTO labels (cred, label, last_seen) VALUES (?, ?, ?)", cred, label, now);
    return true;
  }

  /** Each credential's keys (`provider:hash` to its rows' keys), whatever others have flooded the list with: the operator's view of pool members. */
  async keysOf(creds: string[]): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const cred of new Set(creds)) {
      const at = cred.indexOf(":");
      out[cred] = this.ctx.storage.sql
        .exec<{ key: string }>("SELECT key FROM keys WHERE provider = ? AND key LIKE ? ORDER BY last_seen DESC LIMIT ?", cred.slice(0, at), `%:${cred.slice(at + 1)}`, LIST_MAX)
        .toArray()
        .map((r) => r.key);
    }
    return out;
  }

  /** Upsert; an older report arriving late never moves lastSeen back. */
  async report(e: DirectoryEntry): Promise<void> {
    const sql = this.ctx.storage.sql;
    const known = sql.exec("SELECT 1 FROM keys WHERE key = ?", e.key).toArray().length > 0;
    sql.exec(
      `INSERT INTO keys (key, provider, model, lim, in_flight, queued, first_seen, last_seen)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
       ON CONFLICT (key) DO UPDATE SET
         lim = excluded.lim, in_flight = excluded.in_flight, queued = excluded.queued, last_seen = excluded.last_seen
       WHERE excluded.last_seen >= keys.last_seen`,
      e.key, e.provider, e.model, e.limit, e.inFlight, e.queued, e.lastSeen,
    );
    this.prune(e.lastSeen);
    if (!known) this.cap();
  }

  /** A new row past the cap pushes out the least recently seen. */
  private cap(): void {
    const sql = this.ctx.storage.sql;
    this.rows = this.rows === null ? sql.exec<{ n: number }>("SELECT count(*) AS n FROM keys").one().n : this.rows + 1;
    if (this.rows <= this.maxRows) return;
    sql.exec("DELETE FROM keys WHERE key IN (SELECT key FROM keys ORDER BY last_seen ASC, key LIMIT ?)", this.rows - this.maxRows);
    this.rows = this.maxRows;
  }

  /** Newest lastSeen first, at most `max`; `total` says how many there are in all. */
  async list(max: number = LIST_MAX): Promise<{ entries: DirectoryEntry[]; total: number }> {
    return this.newest(Math.min(LIST_MAX, max));
  }

  /** As `list`, up to RECENT_MAX: the keys a metrics scrape exports. */
  async recent(max: number = RECENT_MAX): Promise<{ entries: DirectoryEntry[]; total: number }> {
    return this.newest(Math.min(RECENT_MAX, max));
  }

  private newest(max: number): { entries: DirectoryEntry[]; total: number } {
    const sql = this.ctx.storage.sql;
    const n = Math.max(0, Math.floor(max));
    const entries = sql.exec<Row>("SELECT * FROM keys ORDER BY last_seen DESC, key LIMIT ?", n).toArray().map(toEntry);
    const total = sql.exec<{ n: number }>("SELECT count(*) AS n FROM keys").one().n;
    return { entries, total };
  }

  async get(key: string): Promise<DirectoryEntry | null> {
    const rows = this.ctx.storage.sql.exec<Row>("SELECT * FROM keys WHERE key = ?", key).toArray();
    return rows[0] ? toEntry(rows[0]) : null;
  }

  private prune(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.ctx.storage.sql.exec("DELETE FROM keys WHERE last_seen < ?", now - RETENTION_MS);
    this.ctx.storage.sql.exec("DELETE FROM labels WHERE last_seen < ?", now - RETENTION_MS);
    this.rows = null;
  }
}
