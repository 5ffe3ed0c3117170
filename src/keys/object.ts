import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { Period } from "../budget/period";
import type { Lane } from "../limiter/lanes";
import type { Tier } from "../providers/dialect";
import { DEFAULT_SCOPES, type Scope } from "../providers/endpoints";
import type { CacheScope, KeySpec } from "./spec";

/** A virtual key as stored and listed: everything but the key, which is kept only as its HMAC. */
export interface VirtualKey extends KeySpec {
  createdAt: string;
  lastUsed: string | null;
}

type Row = {
  name: string; pool: string; lane: string | null; max_concurrency: number | null; budget: number | null; budget_period: string | null;
  scopes: string | null; cache: string | null; tier: string | null; created_at: number; last_used: number | null;
};

const toKey = (r: Row): VirtualKey => ({
  name: r.name,
  pool: r.pool,
  lane: r.lane as Lane | null,
  maxConcurrency: r.max_concurrency,
  budget: r.budget ?? null,
  budgetPeriod: (r.budget_period as Period | null) ?? null,
  // A key minted before scopes existed has the default ones.
  scopes: r.scopes ? (JSON.parse(r.scopes) as Scope[]) : [...DEFAULT_SCOPES],
  cache: (r.cache as CacheScope | null) ?? null,
  tier: (r.tier as Tier | null) ?? null,
  createdAt: new Date(r.created_at).toISOString(),
  lastUsed: r.last_used === null ? null : new Date(r.last_used).toISOString(),
});

/** lastUsed is written at most this often per key: a lookup is not a write. */
const TOUCH_MS = 5_000;

/** A lookup's answer: the key, or null; `empty` when this instance holds no key at all. */
export interface Found {
  key: VirtualKey | null;
  empty: boolean;
}

/**
 * One instance of the virtual key store (store.ts says which): name, pool, lane, cap and the key's
 * HMAC (keys.ts), never the key. Workers look keys up by HMAC and cache the answer for a second
 * (lookup.ts).
 */
export class VirtualKeys extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS vkeys (
        name TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, pool TEXT NOT NULL, lane TEXT,
        max_concurrency INTEGER, created_at INTEGER NOT NULL, last_used INTEGER)`,
    );
    // Budgets, scopes, the cache's scope and the tier came later: a store made before them gets their columns.
    const cols = ctx.storage.sql.exec<{ name: string }>("PRAGMA table_info(vkeys)").toArray().map((c) => c.name);
    if (!cols.includes("budget")) ctx.storage.sql.exec("ALTER TABLE vkeys ADD COLUMN budget REAL; ALTER TABLE vkeys ADD COLUMN budget_period TEXT");
    if (!cols.includes("scopes")) ctx.storage.sql.exec("ALTER TABLE vkeys ADD COLUMN scopes TEXT; ALTER TABLE vkeys ADD COLUMN cache TEXT");
    if (!cols.includes("tier")) ctx.storage.sql.exec("ALTER TABLE vkeys ADD COLUMN tier TEXT");
  }

  /** false: the name is taken here. */
  async create(k: KeySpec, hash: string, now: number = Date.now()): Promise<VirtualKey | false> {
    const sql = this.ctx.storage.sql;
    if (this.taken(k.name)) return false;
    sql.exec(
      "INSERT INTO vkeys (name, hash, pool, lane, max_concurrency, budget, budget_period, scopes, cache, tier, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      k.name, hash, k.pool, k.lane, k.maxConcurrency, k.budget, k.budgetPeriod, JSON.stringify(k.scopes), k.cache, k.tier, now,
    );
    return { ...k, createdAt: new Date(now).toISOString(), lastUsed: null };
  }

  async has(name: string): Promise<boolean> {
    return this.taken(name);
  }

  /** Synchronous, so that create's check and insert run with nothing between them. */
  private taken(name: string): boolean {
    return this.ctx.storage.sql.exec("SELECT 1 FROM vkeys WHERE name = ?", name).toArray().length > 0;
  }

  async list(): Promise<VirtualKey[]> {
    return this.ctx.storage.sql.exec<Row>("SELECT * FROM vkeys ORDER BY name").toArray().map(toKey);
  }

  /** true: it existed and is gone. */
  async remove(name: string): Promise<boolean> {
    return this.ctx.storage.sql.exec("DELETE FROM vkeys WHERE name = ?", name).rowsWritten > 0;
  }

  /** The key with this HMAC, or null; a hit counts as a use. */
  async lookup(hash: string, now: number = Date.now()): Promise<Found> {
    const sql = this.ctx.storage.sql;
    const row = sql.exec<Row>("SELECT * FROM vkeys WHERE hash = ?", hash).toArray()[0];
    if (!row) return { key: null, empty: sql.exec("SELECT 1 FROM vkeys LIMIT 1").toArray().length === 0 };
    if (row.last_used === null || now - row.last_used >= TOUCH_MS) {
      sql.exec("UPDATE vkeys SET last_used = ? WHERE name = ?", now, row.name);
      row.last_used = now;
    }
    return { key: toKey(row), empty: false };
  }
}
