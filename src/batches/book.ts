import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { UsageRecord } from "../usage/types";
import { flushMs, LedgerWriter } from "../usage/writer";

/** A batch or file a virtual key made (or a file its batch made), on the member that holds it. */
export interface Owned {
  id: string;
  kind: "file" | "batch";
  member: string;
  /** A file a batch made (output, errors): that batch. */
  batch?: string | null;
  /** The budget's reservation for a batch (null once settled), and what its lines cost as metered. */
  res?: string | null;
  usd?: number;
  /** The last object the provider showed of it (JSON), for lists. */
  obj?: string | null;
}

/**
 * One per virtual key (its name and creation time): the batches and files it made and on which
 * pool member, so it reaches only those (and its pinned member); the result lines already metered,
 * so each is counted once however often its file is read; and the ledger rows they make, written
 * to the ledger's `batch_usage` table in batches from the alarm, as a limiter writes its own.
 */
export class BatchBook extends DurableObject<Env> {
  private ledger: LedgerWriter;
  private sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS owned (id TEXT PRIMARY KEY, kind TEXT NOT NULL, member TEXT NOT NULL, batch TEXT, res TEXT, usd REAL NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, at INTEGER NOT NULL, obj TEXT);" +
        "CREATE TABLE IF NOT EXISTS metered (batch TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (batch, line)) WITHOUT ROWID",
    );
    this.ledger = new LedgerWriter(env.LEDGER, this.sql, flushMs(env.USAGE_FLUSH_MS), undefined, "batch_usage");
    void this.wake();
  }

  async find(id: string): Promise<Owned | null> {
    return (this.sql.exec("SELECT id, kind, member, batch, usd FROM owned WHERE id = ?", id).toArray()[0] as unknown as Owned | undefined) ?? null;
  }

  /** Records what the key made or saw; fields left out keep what was there. */
  async note(rows: Owned[]): Promise<void> {
    for (const r of rows)
      this.sql.exec(
        "INSERT INTO owned (id, kind, member, batch, res, usd, at, obj) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET obj = COALESCE(excluded.obj, obj), batch = COALESCE(excluded.batch, batch)",
        r.id, r.kind, r.member, r.batch ?? null, r.res ?? null, r.usd ?? 0, Date.now(), r.obj ?? null,
      );
  }

  /** The key's own batches or files as last seen, newest first, `limit` after the one named `after`. */
  async list(kind: "file" | "batch", limit: number, after: string | null): Promise<{ ids: string[]; objs: string[]; more: boolean }> {
    const all = this.sql.exec<{ id: string; obj: string }>("SELECT id, obj FROM owned WHERE kind = ? AND obj IS NOT NULL ORDER BY at DESC, id DESC", kind).toArray();
    const from = after === null ? 0 : all.findIndex((r) => r.id === after) + 1;
    const page = all.slice(from, from + limit);
    return { ids: page.map((r) => r.id), objs: page.map((r) => r.obj), more: from + limit < all.length };
  }

  /**
   * Meters the answered lines of one of the key's batches: each line once, ever; its record goes to
   * the ledger at the next write. Returns what the lines not metered before cost.
   */
  async meter(batch: string, key: string, lines: { id: string; record: UsageRecord }[]): Promise<number> {
    if (this.sql.exec("SELECT 1 FROM owned WHERE id = ? AND done = 1", batch).toArray().length > 0) return 0;
    let usd = 0;
    const now = Date.now();
    for (const l of lines) {
      const c = this.sql.exec("INSERT OR IGNORE INTO metered (batch, line) VALUES (?, ?)", batch, l.id);
      c.toArray();
      if (c.rowsWritten === 0) continue;
      this.ledger.add(`${batch}\n${l.id}`, key, l.record, now);
      usd += l.record.costUsd ?? 0;
    }
    this.sql.exec("UPDATE owned SET usd = usd + ? WHERE id = ?", usd, batch);
    await this.wake();
    return usd;
  }

  /**
   * Every result of the batch has been read (or it ended with none): later reads meter nothing,
   * and its reservation, once, is what the batch's budget settles with its lines' cost.
   */
  async close(batch: string): Promise<{ res: string; usd: number } | null> {
    const row = this.sql.exec<{ res: string | null; usd: number }>("SELECT res, usd FROM owned WHERE id = ? AND kind = 'batch'", batch).toArray()[0];
    if (!row) return null;
    this.sql.exec("UPDATE owned SET done = 1, res = NULL WHERE id = ?", batch);
    this.sql.exec("DELETE FROM metered WHERE batch = ?", batch);
    return row.res ? { res: row.res, usd: row.usd } : null;
  }

  async alarm(): Promise<void> {
    const due = this.ledger.due();
    if (due !== null && due <= Date.now()) await this.ledger.flush(Date.now());
    await this.wake();
  }

  /** The alarm goes to the ledger's next write, if one waits. */
  private async wake(): Promise<void> {
    const due = this.ledger.due();
    if (due !== null && (await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Math.max(due, Date.now()));
  }
}

export const bookOf = (env: Env, vk: { name: string; createdAt: string }) => env.BATCH_BOOKS.get(env.BATCH_BOOKS.idFromName(`${vk.name}\n${vk.createdAt}`));
