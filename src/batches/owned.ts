// What a virtual key owns upstream: the files, batches and stored responses it made, on which pool
// member, and the metering of its batches' results. Deployed under the class name `BatchBook` (see
// src/index.ts): a Durable Object's class name is bound in wrangler.toml and keys its storage.
import { DurableObject } from "cloudflare:workers";
import { budgetOf } from "../budget/object";
import type { Period } from "../budget/period";
import type { Env } from "../env";
import { flushMs, LedgerWriter } from "../usage/writer";
import type { BatchFacts } from "./ops";
import type { Metered } from "./price";
import { batchNow, readResults } from "./reread";

/** A batch, file or stored response a virtual key made (or a file its batch made), on the member that holds it. */
export interface Owned {
  id: string;
  kind: "file" | "batch" | "response";
  member: string;
  /** A file a batch made (output, errors): that batch. */
  batch?: string | null;
  /** Which of its batch's files: its results (`output`), or the lines that failed (`error`). */
  role?: "output" | "error" | null;
  /** The budget's reservation for a batch (null once settled), and what its lines cost as metered. */
  res?: string | null;
  usd?: number;
  /** The last object the provider showed of it (JSON), for lists. */
  obj?: string | null;
}

/** The virtual key that owns them: its name and creation time (its budget's too), its pool, the route's provider, its budget's period. */
export interface Owner {
  name: string;
  createdAt: string;
  pool: string;
  provider: string;
  period: Period;
}

/** A batch's reservation may stay unsettled for its 24 h window and an hour to read its results (the Budget then charges its estimate). */
export const BATCH_HOLD_MS = 25 * 3_600_000;
/** Once a budgeted batch is seen ended, its holder has this long to read its results whole before the gateway reads them itself. */
export const REREAD_AFTER_MS = 10 * 60_000;
/** A budgeted batch never seen ended is looked at by the gateway itself this long after it was made: its 24 h window and a margin. */
export const LOOK_AFTER_MS = 24 * 3_600_000 + 15 * 60_000;
/** Stored responses are kept by the provider 30 days; the book forgets them after that. */
const RESPONSE_KEPT_MS = 30 * 86_400_000;

type BatchRow = { id: string; member: string; res: string | null; usd: number; done: number; lines: number | null; counted: number; at: number };

/**
 * One per virtual key (its name and creation time), its book of what it owns: the batches, files
 * and stored responses it made and on which pool member, so it reaches only those (and its pinned member); the result
 * lines already metered, so each is counted once however often its file is read; and the ledger
 * rows they make, written to the ledger's `batch_usage` table in batches from the alarm, as a
 * limiter writes its own. A budgeted batch is settled once every line of its results has been
 * metered, whoever read them: its holder, in any order or range, or the gateway itself (reread.ts).
 */
export class OwnedObjects extends DurableObject<Env> {
  private ledger: LedgerWriter;
  private sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS owned (id TEXT PRIMARY KEY, kind TEXT NOT NULL, member TEXT NOT NULL, batch TEXT, res TEXT, usd REAL NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0, at INTEGER NOT NULL, obj TEXT);" +
        "CREATE TABLE IF NOT EXISTS metered (batch TEXT NOT NULL, line TEXT NOT NULL, PRIMARY KEY (batch, line)) WITHOUT ROWID;" +
        "CREATE TABLE IF NOT EXISTS me (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
    );
    // Columns a book made before issue 33 lacks: the file's role, the lines its results hold, the lines counted, when the gateway reads them itself.
    for (const col of ["role TEXT", "lines INTEGER", "counted INTEGER NOT NULL DEFAULT 0", "reread_at INTEGER"])
      try {
        this.sql.exec(`ALTER TABLE owned ADD COLUMN ${col}`);
      } catch {
        // There already.
      }
    this.ledger = new LedgerWriter(env.LEDGER, this.sql, flushMs(env.USAGE_FLUSH_MS), undefined, "batch_usage");
    void this.wake();
  }

  async find(id: string): Promise<Owned | null> {
    const row = this.sql.exec("SELECT id, kind, member, batch, usd, role FROM owned WHERE id = ?", id).toArray()[0] as unknown as Owned | undefined;
    if (!row || row.kind !== "file" || row.role || !row.batch) return row ?? null;
    // A file noted before roles were: its batch's object says which it is.
    const obj = this.sql.exec<{ obj: string | null }>("SELECT obj FROM owned WHERE id = ?", row.batch).toArray()[0]?.obj;
    return { ...row, role: obj?.includes(`"error_file_id":${JSON.stringify(id)}`) ? "error" : "output" };
  }

  /** Those of `ids` the key made, in one call. */
  async owns(ids: string[]): Promise<Owned[]> {
    const out: Owned[] = [];
    for (const id of new Set(ids)) {
      const row = await this.find(id);
      if (row) out.push(row);
    }
    return out;
  }

  /** Records what the key made or saw; fields left out keep what was there. A budgeted batch is looked at by the gateway if never seen ended. */
  async note(rows: Owned[], key: Owner): Promise<void> {
    this.sql.exec("INSERT OR REPLACE INTO me (k, v) VALUES ('key', ?)", JSON.stringify(key));
    const now = Date.now();
    for (const r of rows)
      this.sql.exec(
        "INSERT INTO owned (id, kind, member, batch, role, res, usd, at, obj, reread_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET obj = COALESCE(excluded.obj, obj), batch = COALESCE(excluded.batch, batch), role = COALESCE(excluded.role, role)",
        r.id, r.kind, r.member, r.batch ?? null, r.role ?? null, r.res ?? null, r.usd ?? 0, now, r.obj ?? null, r.res ? now + LOOK_AFTER_MS : null,
      );
    if (rows.some((r) => r.kind === "response")) this.sql.exec("DELETE FROM owned WHERE kind = 'response' AND at < ?", now - RESPONSE_KEPT_MS);
    await this.wake();
  }

  /** The key's own batches or files as last seen, newest first, `limit` after the one named `after`. */
  async list(kind: "file" | "batch", limit: number, after: string | null): Promise<{ ids: string[]; objs: string[]; more: boolean }> {
    const all = this.sql.exec<{ id: string; obj: string }>("SELECT id, obj FROM owned WHERE kind = ? AND obj IS NOT NULL ORDER BY at DESC, id DESC", kind).toArray();
    const from = after === null ? 0 : all.findIndex((r) => r.id === after) + 1;
    const page = all.slice(from, from + limit);
    return { ids: page.map((r) => r.id), objs: page.map((r) => r.obj), more: from + limit < all.length };
  }

  /**
   * Meters result lines of one of the key's batches: each line once, ever; an answered line's
   * record goes to the ledger at the next write. Once every line of its results is counted, the
   * batch is settled.
   */
  async meter(batch: string, lines: Metered[]): Promise<void> {
    const row = this.batch(batch);
    if (!row || row.done) return;
    let usd = 0;
    let counted = 0;
    const now = Date.now();
    for (const l of lines) {
      const c = this.sql.exec("INSERT OR IGNORE INTO metered (batch, line) VALUES (?, ?)", batch, l.id);
      c.toArray();
      if (c.rowsWritten === 0) continue;
      counted++;
      if (!l.record || !this.ledger.add(`${batch}\n${l.id}`, l.key, l.record, now)) continue;
      usd += l.record.costUsd ?? 0;
    }
    this.sql.exec("UPDATE owned SET usd = usd + ?, counted = counted + ? WHERE id = ?", usd, counted, batch);
    await this.settleIfCounted(batch);
    await this.wake();
  }

  /** The batch is over and its results hold `facts.lines` lines: settled now if all are counted, else read by the gateway soon. */
  async ended(facts: BatchFacts): Promise<void> {
    const row = this.batch(facts.id);
    if (!row || row.done || facts.lines === null) return;
    this.sql.exec("UPDATE owned SET lines = ? WHERE id = ?", facts.lines, facts.id);
    if (await this.settleIfCounted(facts.id)) return;
    if (row.res) this.sql.exec("UPDATE owned SET reread_at = MIN(COALESCE(reread_at, ?1), ?1) WHERE id = ?2", Date.now() + REREAD_AFTER_MS, facts.id);
    await this.wake();
  }

  async alarm(): Promise<void> {
    const now = Date.now();
    const due = this.ledger.due();
    if (due !== null && due <= now) await this.ledger.flush(now);
    const rows = this.sql.exec<BatchRow>("SELECT id, member, res, usd, done, lines, counted, at FROM owned WHERE kind = 'batch' AND done = 0 AND reread_at <= ?", now).toArray();
    for (const r of rows) await this.reread(r, now).catch(() => this.later(r, now));
    await this.wake();
  }

  /** The gateway reads the batch itself: its state, then (ended) its results whole, which settles it. */
  private async reread(r: BatchRow, now: number): Promise<void> {
    const key = this.key();
    if (!key) return this.later(r, now);
    const holder = { pool: key.pool, member: r.member, provider: key.provider, vk: key.name };
    const facts = await batchNow(this.env, holder, r.id);
    if (facts?.ended) await this.ended(facts);
    if (!facts?.ended || this.batch(r.id)?.done) return this.later(r, now);
    if (await readResults(this.env, holder, facts, (lines) => this.meter(r.id, lines))) await this.settle(r.id);
    else this.later(r, now);
  }

  /** Looked at again later, until the Budget has charged the reservation's estimate anyway. */
  private later(r: BatchRow, now: number): void {
    const next = now + REREAD_AFTER_MS;
    this.sql.exec("UPDATE owned SET reread_at = ? WHERE id = ?", next - r.at < BATCH_HOLD_MS ? next : null, r.id);
  }

  private batch(id: string): BatchRow | undefined {
    return this.sql.exec<BatchRow>("SELECT id, member, res, usd, done, lines, counted, at FROM owned WHERE id = ? AND kind = 'batch'", id).toArray()[0];
  }

  private key(): Owner | null {
    const v = this.sql.exec<{ v: string }>("SELECT v FROM me WHERE k = 'key'").toArray()[0]?.v;
    return v ? (JSON.parse(v) as Owner) : null;
  }

  private async settleIfCounted(batch: string): Promise<boolean> {
    const row = this.batch(batch);
    if (!row || row.done || row.lines === null || row.counted < row.lines) return false;
    await this.settle(batch);
    return true;
  }

  /**
   * Every line of the batch's results has been metered: later reads meter nothing, and its
   * reservation, once, settles with what its lines cost.
   */
  private async settle(batch: string): Promise<void> {
    const row = this.batch(batch);
    if (!row || row.done) return;
    this.sql.exec("UPDATE owned SET done = 1, res = NULL, reread_at = NULL WHERE id = ?", batch);
    this.sql.exec("DELETE FROM metered WHERE batch = ?", batch);
    const key = this.key();
    // A failed settle leaves the reservation to expire: charged at its estimate, never at nothing.
    if (row.res && key) await budgetOf(this.env, key).settle(row.res, row.usd, key.period).catch(() => {});
  }

  /** The alarm goes to the ledger's next write or the next batch the gateway reads itself, whichever is first. */
  private async wake(): Promise<void> {
    const reread = this.sql.exec<{ t: number | null }>("SELECT MIN(reread_at) AS t FROM owned WHERE done = 0 AND reread_at IS NOT NULL").one().t;
    const due = [this.ledger.due(), reread].filter((t): t is number => t !== null);
    if (!due.length) return;
    const next = Math.max(Math.min(...due), Date.now());
    const set = await this.ctx.storage.getAlarm();
    if (set === null || next < set) await this.ctx.storage.setAlarm(next);
  }
}

/** The key a stage notes what it made under. */
export const ownerOf = (vk: { name: string; createdAt: string; budgetPeriod?: Period | null }, pool: string, provider: string): Owner => ({
  name: vk.name, createdAt: vk.createdAt, pool, provider, period: vk.budgetPeriod ?? "total",
});

export const ownedOf = (env: Env, vk: { name: string; createdAt: string }) => env.BATCH_BOOKS.get(env.BATCH_BOOKS.idFromName(`${vk.name}\n${vk.createdAt}`));
