import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import type { KeyMeta, Op, SettleRequest } from "../../src/limiter/types";
import { RETRY_MS } from "../../src/usage/flush";
import { FLUSH_MS } from "../../src/usage/writer";

const usage = { model: "gpt-4o-mini", caller: "c", tokens: { input: 10, output: 4, cached: 0, cacheWrite: 0 }, costUsd: 0.01 };
const success: SettleRequest = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: true };
const acquire = (id: string): Op => ({ t: "acquire", req: { leaseId: id, cost: 10, retry: false, waitMs: 1_000 } });
/** A plain answer's one op: its settle and release, with its usage. */
const answered = (id: string): Op => ({ t: "settle", id, outcome: { ...success, usage } });

let n = 0;
function limiter(label: string) {
  const key = `openai:usage-${label}-${++n}:00000000000000ab`;
  const meta: KeyMeta = { key, provider: "openai", model: "usage" };
  return { key, meta, stub: env.LIMITER.get(env.LIMITER.idFromName(key)) };
}

/** A fresh key's limiter that has granted and answered these leases, each with `usage`; t0 is just before. */
async function answeredAll(label: string, ids: string[]) {
  const l = limiter(label);
  const t0 = Date.now();
  await l.stub.exchange(l.meta, ids.map(acquire));
  await l.stub.exchange(l.meta, ids.map(answered));
  return { ...l, t0 };
}

/** What the ledger (D1) holds for a key. */
async function ledger(key: string): Promise<{ requests: number | null; input: number | null }> {
  return (await env.LEDGER!.prepare("SELECT sum(requests) AS requests, sum(input) AS input FROM sync_usage WHERE key = ?").bind(key).first())!;
}

/** Moves the object's clock (alarms do not follow fake timers) and runs its alarm. */
async function alarmAt(stub: DurableObjectStub<Limiter>, at: number): Promise<void> {
  await runInDurableObject(stub, (obj: Limiter) => void (obj.now = () => at));
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

const outbox = (stub: DurableObjectStub<Limiter>) =>
  runInDurableObject(stub, (_obj, state) => state.storage.sql.exec<{ id: string }>("SELECT id FROM usage_outbox").toArray().map((r) => r.id));

describe("Limiter: usage riding the releases and settles", () => {
  it("counts a lease's usage once, whichever way it comes and however often", async () => {
    const { key, meta, stub } = limiter("once");
    const t0 = Date.now();
    await stub.exchange(meta, [acquire("a"), acquire("b")]);
    await stub.exchange(meta, [{ t: "release", id: "a", usage }]);
    // The same release again (a retried call), then on its own after a failed batch.
    await stub.exchange(meta, [{ t: "release", id: "a", usage }]);
    await stub.release("a", usage);
    await stub.settle("b", { ...success, usage: { ...usage, tokens: null, costUsd: null } });
    const m = await stub.metrics();
    expect(m.counters.tokens).toEqual({ input: 10, output: 4, cached: 0, cacheWrite: 0 });
    expect(m.counters.costUsd).toBeCloseTo(0.01, 12);
    await alarmAt(stub, t0 + FLUSH_MS + 1_000);
    const row = await env.LEDGER!.prepare("SELECT caller, requests, unknown FROM sync_usage WHERE key = ?").bind(key).all();
    expect(row.results).toEqual([{ caller: "c", requests: 2, unknown: 1 }]);
  });

  it("a record is in the object's storage when it answers: a restart right after loses nothing", async () => {
    const { stub } = await answeredAll("stored", ["a"]);
    await evictDurableObject(stub);
    expect(await outbox(stub)).toEqual(["a"]);
  });

  it("a restarted limiter writes what it held to the ledger at its alarm, with no traffic; its constructor sets the alarm", async () => {
    const { key, stub, t0 } = await answeredAll("restart", ["a", "b"]);
    // Even with the alarm gone (say a restart came between the write and the alarm's), a new life sets one.
    await runInDurableObject(stub, (_obj, state) => state.storage.deleteAlarm());
    await evictDurableObject(stub);
    expect(await runInDurableObject(stub, (_obj, state) => state.storage.getAlarm())).not.toBeNull();
    await alarmAt(stub, t0 + FLUSH_MS + 1_000);
    expect(await ledger(key)).toEqual({ requests: 2, input: 20 });
    expect(await outbox(stub)).toEqual([]);
  });

  it("a batch whose reply was lost is sent again, after a restart too, and counted once", async () => {
    const { key, stub, t0 } = await answeredAll("lost", ["a"]);
    // D1 commits the batch, and the answer never comes back.
    await runInDurableObject(stub, (obj: Limiter) => {
      const real = obj.ledger.db!;
      obj.ledger.db = new Proxy(real, {
        get: (db, p) => (p === "batch" ? async (s: D1PreparedStatement[]) => (await db.batch(s), Promise.reject(new Error("connection reset"))) : Reflect.get(db, p)),
      });
    });
    await alarmAt(stub, t0 + FLUSH_MS + 1_000);
    expect(await ledger(key)).toEqual({ requests: 1, input: 10 });
    expect(await outbox(stub)).toEqual(["a"]);
    await evictDurableObject(stub);
    await alarmAt(stub, t0 + FLUSH_MS + 1_000 + RETRY_MS);
    expect(await ledger(key)).toEqual({ requests: 1, input: 10 });
    expect(await outbox(stub)).toEqual([]);
  });

  it("the same lease's record sent again after a restart (a failed exchange) is counted once, in the ledger and the metrics", async () => {
    const { key, meta, stub, t0 } = await answeredAll("resent", ["a"]);
    await evictDurableObject(stub);
    await stub.settle("a", { ...success, usage });
    await stub.exchange(meta, [answered("a")]);
    expect((await stub.metrics()).counters.tokens.input).toBe(10);
    await alarmAt(stub, t0 + FLUSH_MS + 1_000);
    expect(await ledger(key)).toEqual({ requests: 1, input: 10 });
  });
});
