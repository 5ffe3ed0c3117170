import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import type { AcquireRequest, SettleRequest } from "../../src/limiter/types";

let n = 0;
function limiter() {
  const key = `openai:test-${++n}:0000000000000000`;
  return { key, stub: env.LIMITER.get(env.LIMITER.idFromName(key)) };
}
const req = (key: string, leaseId: string, o: Partial<AcquireRequest> = {}): AcquireRequest => ({
  key, provider: "openai", model: "m", leaseId, cost: 10, retry: false, waitMs: 5_000, ...o,
});
const rateLimited = (retryAfterMs: number): SettleRequest => ({
  cls: "rate_limit", status: 429, info: { retryAfterMs, requests: { limit: 100, remaining: 0, resetAt: null }, tokens: null },
  latencyMs: 30, attempt: 1, final: false, release: true,
});

describe("Limiter Durable Object", () => {
  it("grants immediately under the limit and is idempotent per lease id", async () => {
    const { key, stub } = limiter();
    const [a, again] = await Promise.all([stub.acquire(req(key, "a")), stub.acquire(req(key, "a"))]);
    expect(a.granted).toBe(true);
    expect(again.granted).toBe(true);
    expect((await stub.state()).concurrency.inFlight).toBe(1);
    expect(await stub.release("a")).toBe(true);
    expect(await stub.release("a")).toBe(false);
    expect((await stub.state()).concurrency.inFlight).toBe(0);
  });

  it("queues past the limit and hands the slot to the next waiter on release", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 1 });
    await stub.acquire(req(key, "a"));
    const waiting = stub.acquire(req(key, "b"));
    await new Promise((r) => setTimeout(r, 20));
    expect((await stub.state()).concurrency.queued).toBe(1);
    await stub.release("a");
    expect((await waiting).granted).toBe(true);
  });

  it("answers queue_timeout with a retry-after when the deadline passes", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 1 });
    await stub.acquire(req(key, "a"));
    const r = await stub.acquire(req(key, "b", { waitMs: 50 }));
    expect(r).toMatchObject({ granted: false, reason: "queue_timeout" });
    expect(r.granted === false && r.retryAfterMs).toBeGreaterThanOrEqual(1_000);
    expect((await stub.state()).concurrency.queued).toBe(0);
  });

  it("a cancelled waiter leaves the queue and is never granted", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 1 });
    await stub.acquire(req(key, "a"));
    const b = stub.acquire(req(key, "b"));
    await new Promise((r) => setTimeout(r, 20));
    await stub.cancel("b");
    expect((await b).granted).toBe(false);
    await stub.release("a");
    expect((await stub.state()).concurrency.inFlight).toBe(0);
  });

  it("expires a lease whose Worker never came back, through the alarm", async () => {
    const { key, stub } = limiter();
    await stub.configure({}); // a kept key (an operator's config, or a 2xx): its sweeps are stored alarms
    await stub.acquire(req(key, "orphan"));
    expect((await stub.state()).concurrency.inFlight).toBe(1);
    // Alarms do not follow fake timers: move the object's own clock past the lease's TTL.
    await runInDurableObject(stub, (obj: Limiter) => {
      const start = Date.now();
      obj.now = () => start + 61_000;
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await stub.state()).concurrency.inFlight).toBe(0);
  });

  it("keeps what it learned, and held leases, across a restart", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 32 });
    await stub.acquire(req(key, "a"));
    await stub.acquire(req(key, "held"));
    await stub.settle("a", rateLimited(3_000));
    const before = await stub.state();
    expect(before.concurrency.limit).toBe(32) // a 429 with an empty window holds the key; it does not cut;
    await evictDurableObject(stub);
    const after = await stub.state();
    expect(after.concurrency.limit).toBe(32);
    expect(after.history).toEqual(before.history);
    expect(after.quotas.requests).toMatchObject({ limit: 100 });
    expect(after.cooldownUntil).toBe(before.cooldownUntil);
    expect(after.concurrency.inFlight).toBe(1);
    expect(after.key).toBe(key);
  });

  it("a lease restored after a restart lasts one renewal interval unless its Worker renews it", async () => {
    const { key, stub } = limiter();
    await stub.acquire(req(key, "orphan"));
    await stub.acquire(req(key, "live"));
    await stub.configure({}); // flushes the lease rows now instead of within a second
    await evictDurableObject(stub);
    expect((await stub.state()).concurrency.inFlight).toBe(2);
    const start = await runInDurableObject(stub, (obj: Limiter) => {
      const t = Date.now();
      obj.now = () => t + 10_000;
      return t;
    });
    expect(await stub.renew("live")).toBe(true); // its Worker is still there
    await runInDurableObject(stub, (obj: Limiter) => {
      obj.now = () => start + 26_000; // past 20 s (renewal interval of a 60 s TTL) + 5 s margin
    });
    await runDurableObjectAlarm(stub);
    const s = await stub.state();
    expect(s.concurrency.inFlight).toBe(1); // the orphan is gone well before its 60 s TTL
    expect(await stub.release("live")).toBe(true);
  });

  it("a renewal of a lease it lost (a restart before the lease was written) takes the lease back", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 1 });
    await stub.acquire(req(key, "streaming"));
    await evictDurableObject(stub); // within the flush interval: the lease row was never written
    expect((await stub.state()).concurrency.inFlight).toBe(0);
    expect(await stub.renew("streaming", 10)).toBe(false);
    expect((await stub.state()).concurrency.inFlight).toBe(1);
    // So the key does not admit past it while its stream runs.
    expect((await stub.acquire(req(key, "next", { waitMs: 0 }))).granted).toBe(false);
    expect(await stub.release("streaming")).toBe(true);
  });

  it("a key never answered 2xx sweeps an orphaned lease from memory, with no stored alarm", async () => {
    const { key, stub } = limiter();
    await stub.acquire(req(key, "orphan"));
    expect((await stub.state()).concurrency.inFlight).toBe(1);
    await runInDurableObject(stub, async (obj: Limiter, state: DurableObjectState) => {
      expect(await state.storage.getAlarm()).toBeNull();
      const start = Date.now();
      obj.now = () => start + 61_000;
      await obj.alarm(); // what its timer runs
    });
    expect((await stub.state()).concurrency.inFlight).toBe(0);
  });

  it("writes a kept key's state on its first 2xx, and a later 2xx's with the next flush, not in its own turn", async () => {
    const { key, stub } = limiter();
    const ok: SettleRequest = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 30, attempt: 1, final: true, release: true };
    const written = () => runInDurableObject(stub, (_: Limiter, state: DurableObjectState) => {
      const row = state.storage.sql.exec<{ v: string }>("SELECT v FROM state WHERE k = 'core'").toArray()[0];
      return row ? (JSON.parse(row.v) as { metrics: { totalRequests: number } }).metrics.totalRequests : null;
    });
    await stub.acquire(req(key, "a"));
    await stub.settle("a", ok);
    expect(await written()).toBe(1); // the proof is written at once
    await stub.acquire(req(key, "b"));
    await stub.settle("b", ok);
    // A reply waits for the writes of its turn: the next request's acquire, which carries this
    // settle, would wait for a commit of the whole state.
    expect(await written()).toBe(1);
    await stub.configure({}); // an operator's change is written at once, and so is what waited
    expect(await written()).toBe(2);
  });

  it("validates config and reset returns to defaults", async () => {
    const { key, stub } = limiter();
    await stub.acquire(req(key, "a"));
    expect(await stub.configure({ minConcurrency: 10, maxConcurrency: 5 })).toMatchObject({ ok: false });
    const ok = await stub.configure({ maxConcurrency: 64, limit: 20 });
    expect(ok.ok && ok.state.config).toEqual({ maxConcurrency: 64 });
    const reset = await stub.reset();
    expect(reset.concurrency.limit).toBe(16);
    expect(reset.config).toEqual({});
    expect(reset.history).toEqual([]);
  });
});
