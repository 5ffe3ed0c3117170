import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { CacheResult } from "./entry";
import { Flights, type Landing } from "./flights";
import { SHARDS } from "./key";
import { countedAs, emptyNamespace, FIELD, type NamespaceStats } from "./stats";
import { CacheStore, objectKey } from "./store";

/** What a leader reports when it lands: the entry it stored, or null when it stored nothing. */
export interface Landed {
  namespace: string;
  bytes: number;
  storedAt: number;
  expiresAt: number;
}

/** `claim`'s answer: go upstream and land (`lead`), or read the store (an entry is there, or the leader landed), or go alone. */
export type Claim = { role: "lead"; flight: string } | { role: "fresh" } | { role: "landed"; landing: Landing };

/** Expired entries are swept (rows and objects) at most this often, on a landing. */
const SWEEP_EVERY_MS = 10 * 60_000;
const SWEEP_BATCH = 1_000;

export const shardName = (i: number) => `cache-shard-${i}`;

export function shardStub(ns: DurableObjectNamespace<CacheShard>, i: number): DurableObjectStub<CacheShard> {
  return ns.get(ns.idFromName(shardName(i)));
}

export const allShards = (ns: DurableObjectNamespace<CacheShard>) => Array.from({ length: SHARDS }, (_, i) => shardStub(ns, i));

/**
 * One shard of the cache's control plane: the in-flight map (identical misses meet here, wherever
 * they arrive, because the key picks the shard), the index of stored entries and the counters.
 * Bodies never pass through it; they go between the Worker and R2.
 */
export class CacheShard extends DurableObject<Env> {
  private readonly flights = new Flights();
  private sweptAt = 0;
  /** Distinct namespaces in `counts`, read once: new labels past the bound go to the overflow namespace. */
  private counted: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, namespace TEXT, bytes INTEGER, stored_at INTEGER, expires_at INTEGER);" +
      "CREATE INDEX IF NOT EXISTS entries_expiry ON entries (expires_at);" +
      "CREATE TABLE IF NOT EXISTS counts (namespace TEXT, result TEXT, n INTEGER, PRIMARY KEY (namespace, result))");
  }

  /**
   * A miss asks whether to go upstream. `fresh` when the index already holds a usable entry (it was
   * stored after the caller's read); otherwise the first caller leads (its flight lasts until
   * `until.lead`) and later ones wait for it, at most until the earlier of the leader's bound and
   * their own `until.wait`, after which they go on their own.
   */
  async claim(key: string, minStoredAt: number | null, until: { lead: number; wait: number }): Promise<Claim> {
    const now = Date.now();
    const row = this.ctx.storage.sql.exec<{ n: number }>(
      "SELECT count(*) AS n FROM entries WHERE key = ? AND expires_at > ? AND stored_at >= ?", key, now, minStoredAt ?? 0).one();
    if (row.n > 0) return { role: "fresh" };
    const j = this.flights.join(key, now, until.lead, until.wait);
    if ("lead" in j) return { role: "lead", flight: j.lead };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Landing>((r) => (timer = setTimeout(() => r("failed"), Math.max(0, j.until - now))));
    try {
      return { role: "landed", landing: await Promise.race([j.wait, late]) };
    } finally {
      clearTimeout(timer);
      j.leave();
    }
  }

  /** The leader is back (flight null: a request that stored without leading, e.g. a refresh). */
  async land(key: string, flight: string | null, entry: Landed | null): Promise<number> {
    const now = Date.now();
    if (entry)
      this.ctx.storage.sql.exec(
        "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)",
        key, entry.namespace, entry.bytes, entry.storedAt, entry.expiresAt);
    const told = flight === null ? 0 : this.flights.land(key, flight, entry ? "stored" : "failed");
    if (now - this.sweptAt >= SWEEP_EVERY_MS) {
      this.sweptAt = now;
      this.ctx.waitUntil(this.sweep(now));
    }
    return told;
  }

  /** Adds counts (an isolate's batch: namespace, result, how many); a new namespace past the bound is counted as the overflow one. */
  async count(counts: [string, CacheResult, number][]): Promise<void> {
    const sql = this.ctx.storage.sql;
    this.counted ??= sql.exec<{ n: number }>("SELECT count(DISTINCT namespace) AS n FROM counts").one().n;
    for (const [label, result, n] of counts) {
      const known = sql.exec("SELECT 1 FROM counts WHERE namespace = ? LIMIT 1", label).toArray().length > 0;
      const namespace = countedAs(label, known, this.counted);
      if (!known && namespace === label) this.counted++;
      sql.exec(
        "INSERT INTO counts (namespace, result, n) VALUES (?1, ?2, ?3) ON CONFLICT (namespace, result) DO UPDATE SET n = n + ?3",
        namespace, result, n);
    }
  }

  /** This shard's live entries, bytes and counters per namespace. */
  async stats(): Promise<NamespaceStats[]> {
    const sql = this.ctx.storage.sql;
    const by = new Map<string, NamespaceStats>();
    const of = (ns: string) => by.get(ns) ?? by.set(ns, emptyNamespace(ns)).get(ns)!;
    for (const r of sql.exec<{ namespace: string; n: number; b: number }>(
      "SELECT namespace, count(*) AS n, sum(bytes) AS b FROM entries WHERE expires_at > ? GROUP BY namespace", Date.now())) {
      const s = of(r.namespace);
      s.entries = r.n;
      s.bytes = r.b;
    }
    for (const r of sql.exec<{ namespace: string; result: CacheResult; n: number }>("SELECT namespace, result, n FROM counts"))
      if (r.result in FIELD) of(r.namespace)[FIELD[r.result]] += r.n;
    return [...by.values()];
  }

  /** Forgets the index rows of a namespace (all with null); the route deletes the objects by prefix. */
  async forget(namespace: string | null): Promise<number> {
    const sql = this.ctx.storage.sql;
    const cur = namespace === null ? sql.exec("DELETE FROM entries") : sql.exec("DELETE FROM entries WHERE namespace = ?", namespace);
    return cur.rowsWritten;
  }

  /** Expired entries: their objects out of R2, then their rows. */
  private async sweep(now: number): Promise<void> {
    const sql = this.ctx.storage.sql;
    const rows = sql.exec<{ key: string; namespace: string }>("SELECT key, namespace FROM entries WHERE expires_at <= ? LIMIT ?", now, SWEEP_BATCH).toArray();
    if (!rows.length) return;
    try {
      await new CacheStore(this.env.CACHE_BUCKET).delete(rows.map((r) => objectKey(r.namespace, r.key)));
    } catch {
      return; // the next sweep tries again; readers check expiry anyway
    }
    for (const r of rows) sql.exec("DELETE FROM entries WHERE key = ? AND expires_at <= ?", r.key, now);
  }
}
