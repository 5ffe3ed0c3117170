import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import { type LimiterCore, renewEvery } from "../../src/limiter/core";
import { EPOCH_SPAN } from "../../src/limiter/tickets/epoch";
import { TICKET_LAPSE_MS } from "../../src/limiter/tickets/policy";
import type { KeyMeta, Op, OpResult, SettleRequest } from "../../src/limiter/types";

let n = 0;
/** A key past its learning probe (a new key lets one request go alone until it has an answer). */
async function limiter() {
  const meta: KeyMeta = { key: `openai:batch-${++n}:0000000000000000`, provider: "openai", model: "m" };
  const stub = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
  await stub.exchange(meta, [acquire("probe")]);
  await stub.exchange(meta, [{ t: "settle", id: "probe", outcome: ok }]);
  return { meta, stub };
}
const acquire = (id: string, waitMs = 5_000): Op => ({ t: "acquire", req: { leaseId: id, cost: 10, retry: false, waitMs } });
const ok: SettleRequest = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 20, attempt: 1, final: true, release: true };
const granted = (r: OpResult | undefined) => typeof r === "object" && "granted" in r && r.granted;
const queued = (r: OpResult | undefined) => typeof r === "object" && "queued" in r;

describe("Limiter.exchange: a batch of calls from one isolate", () => {
  it("grants in the order asked up to the limit and answers the rest `queued`; each waits in its place", async () => {
    const { meta, stub } = await limiter();
    await stub.configure({ limit: 2 });
    const r = await stub.exchange(meta, ["a", "b", "c", "d"].map((id) => acquire(id)));
    expect(r.results.map(granted)).toEqual([true, true, false, false]);
    expect(r.results.slice(2).every(queued)).toBe(true);
    expect(r.queued).toBe(2);
    // The Worker waits for its queued ones with acquire: the same id keeps its place, it is not queued twice.
    const c = stub.acquire({ ...meta, leaseId: "c", cost: 10, retry: false, waitMs: 5_000 });
    const d = stub.acquire({ ...meta, leaseId: "d", cost: 10, retry: false, waitMs: 5_000 });
    expect((await stub.state()).concurrency.queued).toBe(2);
    // Another isolate's batch releases a: c (first in line) goes, not d.
    const other = await stub.exchange(meta, [{ t: "settle", id: "a", outcome: ok }]);
    expect(other.results).toEqual([{ retry: "wait" }]);
    expect(await c).toMatchObject({ granted: true, leaseId: "c" });
    const st = await stub.state();
    expect(st.concurrency).toMatchObject({ inFlight: 2, queued: 1 });
    await stub.exchange(meta, [{ t: "release", id: "b" }]);
    expect(await d).toMatchObject({ granted: true, leaseId: "d" });
  });

  it("applies a batch in order: a release before an acquire frees the slot for it in the same call", async () => {
    const { meta, stub } = await limiter();
    await stub.configure({ limit: 1 });
    await stub.exchange(meta, [acquire("a")]);
    const r = await stub.exchange(meta, [{ t: "settle", id: "a", outcome: ok }, acquire("b")]);
    expect(granted(r.results[1])).toBe(true);
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 1, queued: 0 });
  });

  it("is idempotent: a batch sent again (its first answer lost) changes nothing", async () => {
    const { meta, stub } = await limiter();
    await stub.configure({ limit: 4 });
    const batch: Op[] = [acquire("a"), acquire("b")];
    const first = await stub.exchange(meta, batch);
    const again = await stub.exchange(meta, batch);
    expect(again.results).toEqual(first.results.map((r) => (granted(r) ? { ...(r as object), waitedMs: 0 } : r)));
    expect((await stub.state()).concurrency.inFlight).toBe(2);
    const done: Op[] = [{ t: "settle", id: "a", outcome: ok }, { t: "release", id: "b" }];
    await stub.exchange(meta, done);
    const st1 = await stub.state();
    await stub.exchange(meta, done);
    const st2 = await stub.state();
    expect(st2.concurrency.inFlight).toBe(0);
    expect(st2.metrics.totalRequests).toBe(st1.metrics.totalRequests); // the settle counted once
    // A refused acquire asked again gets the same refusal, not a place in line.
    await stub.configure({ limit: 1 });
    await stub.exchange(meta, [acquire("h")]);
    const refused = await stub.exchange(meta, [acquire("late", 0)]);
    expect(granted(refused.results[0])).toBe(false);
    await stub.exchange(meta, [{ t: "release", id: "h" }]);
    const late = await stub.exchange(meta, [acquire("late", 0)]);
    expect(late.results[0]).toMatchObject({ granted: false, reason: "queue_timeout" });
  });

  it("a settle-and-release that waited in the Worker is dated back by its age", async () => {
    /** Holds a slot 1 s by the object's clock; the Worker's answer came `ageMs` before the batch did. */
    const holdAfter = async (ageMs: number) => {
      const { meta, stub } = await limiter();
      await stub.exchange(meta, [acquire("a")]);
      const t0 = await runInDurableObject(stub, (obj: Limiter) => obj.now());
      await runInDurableObject(stub, (obj: Limiter) => void (obj.now = () => t0 + 1_000));
      await stub.exchange(meta, [{ t: "settle", id: "a", outcome: { ...ok, latencyMs: 100 }, ageMs }]);
      return runInDurableObject(stub, (obj: Limiter) => (obj as unknown as { core: { pace: { holdMs: number } } }).core.pace.holdMs);
    };
    // Let go at t0 + 600 rather than t0 + 1,000: the learned hold time is shorter by about the age's share.
    const [fresh, aged] = [await holdAfter(0), await holdAfter(400)];
    expect(aged).toBeLessThan(fresh - 20);
  });

  it("an isolate that dies with a batch in flight: the leases it took expire, the next waiter goes, nothing else is lost", async () => {
    const { meta, stub } = await limiter();
    await stub.configure({ limit: 2 });
    // The dead isolate's batch took both slots and its Worker never came back.
    const lost = await stub.exchange(meta, [acquire("dead-1"), acquire("dead-2")]);
    expect(lost.results.every(granted)).toBe(true);
    // A live isolate's request waits behind them.
    const live = stub.acquire({ ...meta, leaseId: "live", cost: 10, retry: false, waitMs: 120_000 });
    await expect.poll(async () => (await stub.state()).concurrency.queued).toBe(1);
    const start = await runInDurableObject(stub, (obj: Limiter) => obj.now());
    await runInDurableObject(stub, (obj: Limiter) => {
      obj.now = () => start + 61_000; // past LEASE_TTL_MS
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await live).toMatchObject({ granted: true, leaseId: "live" });
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 1, queued: 0 });
  });

  it("counts its calls and the operations they carry (what batching saves)", async () => {
    const { meta, stub } = await limiter();
    await stub.exchange(meta, [acquire("a"), acquire("b"), acquire("c")]);
    await stub.exchange(meta, [{ t: "settle", id: "a", outcome: ok }, { t: "release", id: "b" }, { t: "release", id: "c" }]);
    await stub.release("nobody");
    const m = await stub.metrics();
    // Two calls of the probe, then three calls carrying seven operations.
    expect(m.counters.calls).toBe(2 + 3);
    expect(m.counters.ops).toBe(2 + 7);
  });
});

/** The grants the key's windows have counted (each request charged once). */
const grants = (stub: DurableObjectStub<Limiter>) => runInDurableObject(stub, (obj: Limiter) => (obj as unknown as { core: LimiterCore }).core.quota.granted.requests);
/** Sets the object's clock `ms` after `start` (default: now); returns `start`. */
const at = (stub: DurableObjectStub<Limiter>, ms: number, start?: number) => runInDurableObject(stub, (obj: Limiter) => {
  const t = start ?? Date.now();
  obj.now = () => t + ms;
  return t;
});

describe("Limiter.exchange with tickets (issue 36)", () => {
  /** Moves the object's clock past a new key's opening. */
  const later = (stub: DurableObjectStub<Limiter>) => runInDurableObject(stub, (obj: Limiter) => {
    const t = Date.now() + 10_000;
    obj.now = () => t;
  });

  it("answers an isolate's ask with tickets on a kept key with room; a use and a give-back go with a later batch", async () => {
    const { meta, stub } = await limiter();
    await later(stub);
    const r = await stub.exchange(meta, [], { want: 2, cost: 50 });
    expect(r.tickets).toMatchObject({ cost: 50, leaseTtlMs: 60_000, limit: 16 });
    expect(r.tickets!.ids).toHaveLength(2);
    expect(r.epoch).toEqual(expect.any(Number));
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 0, tickets: 2 });
    const [a, b] = r.tickets!.ids as [string, string];
    await stub.exchange(meta, [{ t: "use", id: a, cost: 40 }, { t: "release", id: b }]);
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 1, tickets: 0 });
    await stub.exchange(meta, [{ t: "settle", id: a, outcome: ok }]);
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 0, tickets: 0 });
  });

  it("a restart right after it handed tickets out, before they were written, holds back their share of the slots until they lapse", async () => {
    const { meta, stub } = await limiter();
    await later(stub);
    await stub.configure({ limit: 4 });
    const r = await stub.exchange(meta, [], { want: 2, cost: 50 });
    expect(r.tickets!.ids).toHaveLength(2);
    await evictDurableObject(stub); // within the flush: no lease row for them
    const s = await stub.state();
    expect(s.concurrency).toMatchObject({ inFlight: 0, tickets: 2 }); // half of 4 slots held back
    const again = await stub.exchange(meta, [{ t: "use", id: r.tickets!.ids[0]!, cost: 40 }, acquire("x"), acquire("y"), acquire("z", 0)]);
    expect(again.epoch).toBeGreaterThan(r.epoch!); // a new life, a later epoch: the isolate gives back what it held
    // The used one has its slot; one slot stays held back for the other; two are left for requests.
    expect(again.results.map((x) => (typeof x === "object" && "granted" in x ? x.granted : x))).toEqual([true, true, true, false]);
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 3, tickets: 1 });
  });

  it("hands out none for a key not yet kept (no 2xx), and changes its epoch on a 429", async () => {
    const meta: KeyMeta = { key: `openai:fresh-${++n}:0000000000000000`, provider: "openai", model: "m" };
    const fresh = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
    await fresh.exchange(meta, [acquire("probe")]);
    await fresh.exchange(meta, [{ t: "settle", id: "probe", outcome: { ...ok, status: 404, cls: "fatal" } }]);
    await later(fresh);
    expect((await fresh.exchange(meta, [], { want: 2, cost: 1 })).tickets).toBeUndefined();
    const { meta: kept, stub } = await limiter();
    await later(stub);
    const r = await stub.exchange(kept, [acquire("a")], { want: 1, cost: 10 });
    expect(r.tickets?.ids).toHaveLength(1);
    const refused: SettleRequest = { ...ok, cls: "rate_limit", status: 429, final: false, info: { retryAfterMs: 1_000, requests: null, tokens: null } };
    const after = await stub.exchange(kept, [{ t: "settle", id: "a", outcome: refused }], { want: 1, cost: 10 });
    expect(after.epoch).toBeGreaterThan(r.epoch!);
    expect(after.tickets).toBeUndefined();
  });

  it("a restart after a ticket was used and its row written: that one is a request out again, charged once; both are freed by the restore grace", async () => {
    const { meta, stub } = await limiter();
    await later(stub);
    const r = await stub.exchange(meta, [], { want: 2, cost: 50 });
    const [a] = r.tickets!.ids as [string, string];
    await stub.exchange(meta, [{ t: "use", id: a, cost: 40 }]);
    await stub.configure({}); // a flush: the rows and the windows written together
    const charged = await grants(stub);
    await evictDurableObject(stub);
    // The used one is out (the unused one is a ticket, beside the slots held back for any not written).
    expect((await stub.state()).concurrency.inFlight).toBe(1);
    const start = await at(stub, 0);
    await at(stub, TICKET_LAPSE_MS + 1, start);
    await stub.exchange(meta, []);
    expect(await grants(stub)).toBe(charged + 1); // the unused one, at its lapse; the used one not again
    await at(stub, renewEvery(60_000) + 5_000, start);
    await runDurableObjectAlarm(stub);
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 0, tickets: 0 });
  });

  it("each life's epoch is above the last's, so an isolate can tell a late answer from a new one", async () => {
    const { meta, stub } = await limiter();
    let last = (await stub.exchange(meta, [])).epoch!;
    for (let i = 0; i < 2; i++) {
      await evictDurableObject(stub);
      const now = (await stub.exchange(meta, [])).epoch!;
      expect(now).toBeGreaterThan(last);
      expect(now - last).toBeLessThanOrEqual(EPOCH_SPAN);
      last = now;
    }
  });

  it("reads lease rows written before they said whether a ticket was used: such a ticket is restored as a ticket, as it was", async () => {
    const meta: KeyMeta = { key: `openai:old-rows-${++n}:0000000000000000`, provider: "openai", model: "m" };
    const stub = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
    await runInDurableObject(stub, (_obj: Limiter, state) => {
      const sql = state.storage.sql;
      sql.exec("CREATE TABLE state (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
      sql.exec("CREATE TABLE leases (id TEXT PRIMARY KEY, cost REAL NOT NULL, expires INTEGER NOT NULL)");
      sql.exec("INSERT INTO state (k, v) VALUES ('core', '{}')");
      sql.exec("INSERT INTO leases (id, cost, expires) VALUES ('~old.1', 50, ?), ('req:1', 10, ?)", Date.now() + 60_000, Date.now() + 60_000);
    });
    await evictDurableObject(stub);
    expect((await stub.state()).concurrency).toMatchObject({ inFlight: 1, tickets: 1 });
    await stub.exchange(meta, [{ t: "use", id: "~old.1", cost: 50 }]);
    await stub.configure({});
    const rows = await runInDurableObject(stub, (_obj: Limiter, state) => state.storage.sql.exec<{ id: string; unused: number }>("SELECT id, unused FROM leases ORDER BY id").toArray());
    expect(rows).toEqual([{ id: "req:1", unused: null }, { id: "~old.1", unused: 0 }]);
  });
});
