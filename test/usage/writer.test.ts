import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RETRY_MS } from "../../src/usage/flush";
import { LedgerWriter } from "../../src/usage/writer";

const T0 = Date.UTC(2030, 0, 1, 0, 0);
const EVERY = 10_000;
const rec = { model: "m", tokens: { input: 3, output: 1, cached: 0, cacheWrite: 0 }, costUsd: 0.001 };

type Bound = { sql: string; args: unknown[] };
/** A D1 that records each batch's statements and fails while `down`. */
function fakeD1() {
  const sent: Bound[][] = [];
  const d = {
    down: false,
    sent,
    db: {
      prepare: (sql: string) => ({ sql, args: [], bind: (...args: unknown[]) => ({ sql, args }) }),
      batch: async (stmts: Bound[]) => {
        sent.push(stmts);
        if (d.down) throw new Error("D1 is down");
        return [];
      },
    } as unknown as D1Database,
    /** Per try: the batch id and the requests its upserts carry. */
    tries: () =>
      sent.map((stmts) => {
        const ups = stmts.filter((s) => s.sql.startsWith("INSERT INTO sync_usage "));
        return { id: ups[0]?.args.at(-1), requests: ups.reduce((a, s) => a + (s.args[7] as number), 0) };
      }),
  };
  return d;
}

/** A writer over a fresh object's SQLite storage (the Limiter's own writer there stays empty). */
async function inStorage<T>(name: string, fn: (sql: SqlStorage) => T | Promise<T>): Promise<T> {
  const stub = env.LIMITER.get(env.LIMITER.idFromName(`writer-test:${name}`));
  return runInDurableObject(stub, (_obj, state) => fn(state.storage.sql));
}

describe("LedgerWriter: the outbox and its batches", () => {
  it("a failed write keeps its records and its batch: the retry sends the same id and the same records; later records go in the next batch", async () => {
    const d = fakeD1();
    await inStorage("retry", async (sql) => {
      const w = new LedgerWriter(d.db, sql, EVERY);
      expect(w.due()).toBeNull();
      w.add("a", "k", rec, T0);
      w.add("b", "k", rec, T0 + 1_000);
      expect(w.due()).toBe(T0 + EVERY);
      expect(sql.exec("SELECT id FROM usage_outbox ORDER BY seq").toArray().map((r) => r.id)).toEqual(["a", "b"]);
      d.down = true;
      await w.flush(T0 + EVERY);
      expect(w.pending).toBe(2);
      expect(w.due()).toBe(T0 + EVERY + RETRY_MS);
      w.add("c", "k", rec, T0 + 20_000);
      d.down = false;
      await w.flush(T0 + EVERY + RETRY_MS);
      expect(w.pending).toBe(1);
      // c came while the batch was open: it waits its own interval, long past by now.
      expect(w.due()).toBe(T0 + 20_000 + EVERY);
      await w.flush(T0 + 45_000);
      expect(w.pending).toBe(0);
      expect(w.due()).toBeNull();
    });
    const tries = d.tries();
    expect(tries.map((t) => t.requests)).toEqual([2, 2, 1]);
    expect(tries[1]!.id).toBe(tries[0]!.id);
    expect(tries[2]!.id).not.toBe(tries[0]!.id);
    expect(String(tries[0]!.id)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("a new writer over the same storage (a restart) finds the open batch and sends it again, the records since in the next", async () => {
    const d = fakeD1();
    await inStorage("restart", async (sql) => {
      const w = new LedgerWriter(d.db, sql, EVERY);
      w.add("a", "k", rec, T0);
      d.down = true;
      await w.flush(T0 + EVERY);
      w.add("b", "k", rec, T0 + 11_000);
      d.down = false;
      const again = new LedgerWriter(d.db, sql, EVERY);
      expect(again.pending).toBe(2);
      expect(again.due()).toBe(T0 + EVERY); // from the oldest record kept: at once
      await again.flush(T0 + 60_000);
      await again.flush(T0 + 60_000);
      expect(again.pending).toBe(0);
    });
    const tries = d.tries();
    expect(tries.map((t) => t.requests)).toEqual([1, 1, 1]);
    expect(tries[1]!.id).toBe(tries[0]!.id);
  });

  it("a lease's record is kept once; past the cap the oldest go and are counted as dropped", async () => {
    const d = fakeD1();
    await inStorage("cap", async (sql) => {
      const w = new LedgerWriter(d.db, sql, EVERY, 100);
      expect(w.add("same", "k", rec, T0)).toBe(true);
      expect(w.add("same", "k", rec, T0)).toBe(false);
      for (let i = 0; i < 100; i++) w.add(`r${i}`, "k", rec, T0 + i);
      expect(w.dropped).toBe(2); // 101 held: the oldest two go, one below the cap
      expect(w.pending).toBe(99);
      expect(sql.exec("SELECT min(at) AS at FROM usage_outbox").one().at).toBe(T0 + 1);
      await w.flush(T0 + EVERY);
    });
    expect(d.tries().map((t) => t.requests)).toEqual([99]);
  });

  it("with no ledger bound, nothing is kept and each lease is still counted once", async () => {
    await inStorage("unbound", (sql) => {
      const w = new LedgerWriter(undefined, sql, EVERY);
      expect(w.add("a", "k", rec, T0)).toBe(true);
      expect(w.add("a", "k", rec, T0)).toBe(false);
      expect(w.pending).toBe(0);
      expect(w.due()).toBeNull();
      expect(sql.exec("SELECT count(*) AS n FROM sqlite_master WHERE name = 'usage_outbox'").one().n).toBe(0);
    });
  });
});
