import { describe, expect, it } from "vitest";
import { type Carrier, Channel, type Stub } from "../../src/proxy/channel";
import type { ExchangeReply, KeyMeta, Op } from "../../src/limiter/types";

const META: KeyMeta = { key: "openai:m:0", provider: "openai", model: "m" };
const acquire = (id: string): Op => ({ t: "acquire", req: { leaseId: id, cost: 1, retry: false, waitMs: 1_000 } });
const release = (id: string): Op => ({ t: "release", id });
const settle = (id: string): Op => ({ t: "settle", id, outcome: { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: false } });
const turn = () => new Promise((r) => setTimeout(r, 0));

/** A fake object: records each batch; answers acquires granted; `hold` keeps batches out until released. */
function fakeObject(queued = 0, room = 100) {
  const batches: Op[][] = [];
  const alone: string[] = [];
  const held: (() => void)[] = [];
  let hold = false;
  let fail = false;
  const stub: Stub = {
    exchange: (async (_meta: KeyMeta, ops: Op[]): Promise<ExchangeReply> => {
      batches.push(ops);
      if (hold) await new Promise<void>((r) => held.push(r));
      if (fail) throw Object.assign(new Error("object reset"), { retryable: true });
      return { results: ops.map((o) => (o.t === "acquire" ? { granted: true, leaseId: o.req.leaseId, waitedMs: 0, leaseTtlMs: 60_000, limit: 16 } : true)), queued, room };
    }) as never,
    settle: (async (id: string) => void alone.push(`settle ${id}`)) as never,
    release: (async (id: string) => (alone.push(`release ${id}`), true)) as never,
    renew: (async () => true) as never,
    cancel: (async () => true) as never,
  };
  const kept: Promise<unknown>[] = [];
  const carrier: Carrier = { stub: () => stub, fresh: () => stub, waitUntil: (p) => kept.push(p) };
  return {
    batches, alone, carrier, kept,
    hold: (on: boolean) => (hold = on),
    fail: (on: boolean) => (fail = on),
    letGo: () => held.splice(0).forEach((r) => r()),
    names: () => batches.map((b) => b.map((o) => `${o.t} ${o.t === "acquire" ? o.req.leaseId : o.id}`)),
  };
}

/** A clock and timers the test moves by hand. */
function manual() {
  let now = 1_000;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    set: (fn: () => void, ms: number) => void timers.push({ at: now + ms, fn }),
    advance(ms: number) {
      now += ms;
      for (const t of timers.splice(0)) if (t.at <= now) t.fn(); else timers.push(t);
    },
  };
}

describe("Channel: one isolate's calls to a key, in batches", () => {
  it("sends what several requests asked in one turn as one batch, in the order asked", async () => {
    const obj = fakeObject();
    const ch = new Channel(META, Date.now, 0);
    const answers = Promise.all(["a", "b", "c"].map((id) => ch.call(acquire(id), obj.carrier)));
    expect(obj.batches).toHaveLength(0); // nothing leaves before the end of the turn
    expect((await answers).map((r) => typeof r === "object" && "leaseId" in r && r.leaseId)).toEqual(["a", "b", "c"]);
    expect(obj.names()).toEqual([["acquire a", "acquire b", "acquire c"]]);
  });

  it("holds releases and plain settles while nobody is queued, and sends them with the next acquire, dated by their age", async () => {
    const obj = fakeObject(0);
    const t = manual();
    const ch = new Channel(META, t.now, 5, t.set);
    await ch.call(acquire("a"), obj.carrier); // learns that nobody is queued
    ch.post(settle("a"), obj.carrier);
    ch.post(release("a"), obj.carrier);
    await turn();
    expect(obj.batches).toHaveLength(1);
    t.advance(3);
    await ch.call(acquire("b"), obj.carrier);
    expect(obj.names()[1]).toEqual(["settle a", "release a", "acquire b"]);
    expect(obj.batches[1]!.map((o) => o.ageMs ?? 0)).toEqual([3, 3, 0]);
  });

  it("sends held ops on their own once LINGER_MS has passed with no acquire", async () => {
    const obj = fakeObject(0);
    const t = manual();
    const ch = new Channel(META, t.now, 5, t.set);
    await ch.call(acquire("a"), obj.carrier);
    ch.post(release("a"), obj.carrier);
    t.advance(4);
    await turn();
    expect(obj.batches).toHaveLength(1);
    t.advance(1);
    await turn();
    expect(obj.names()[1]).toEqual(["release a"]);
    expect(obj.kept.length).toBeGreaterThan(0); // the wait was kept alive by the request's waitUntil
  });

  it("sends releases at once while someone is queued at the key: a slot never idles for a batch", async () => {
    const obj = fakeObject(3);
    const t = manual();
    const ch = new Channel(META, t.now, 5, t.set);
    await ch.call(acquire("a"), obj.carrier);
    ch.post(release("a"), obj.carrier);
    await turn();
    expect(obj.names()).toEqual([["acquire a"], ["release a"]]);
  });

  it("sends releases at once when the key has fewer than two slots to spare, though nobody is queued", async () => {
    const obj = fakeObject(0, 1);
    const t = manual();
    const ch = new Channel(META, t.now, 5, t.set);
    await ch.call(acquire("a"), obj.carrier);
    ch.post(release("a"), obj.carrier);
    await turn();
    expect(obj.names()).toEqual([["acquire a"], ["release a"]]);
  });

  it("never lets a lease's later op overtake its earlier one still out", async () => {
    const obj = fakeObject(1);
    const ch = new Channel(META, Date.now, 0);
    await ch.call(acquire("a"), obj.carrier);
    obj.hold(true);
    ch.post(settle("a"), obj.carrier);
    await turn();
    obj.hold(false);
    ch.post(release("a"), obj.carrier);
    ch.post(release("b"), obj.carrier); // another lease is not held back
    await turn();
    expect(obj.names().slice(1)).toEqual([["settle a"], ["release b"]]);
    obj.letGo();
    await Promise.all(obj.kept);
    await turn();
    expect(obj.names().slice(1)).toEqual([["settle a"], ["release b"], ["release a"]]);
  });

  it("a failed batch rejects its awaited ops and retries its background ops one by one on a fresh stub", async () => {
    const obj = fakeObject(1);
    const ch = new Channel(META, Date.now, 0);
    obj.fail(true);
    ch.post(release("x"), obj.carrier);
    ch.post(settle("y"), obj.carrier);
    await expect(ch.call(acquire("z"), obj.carrier)).rejects.toThrow(/object reset/);
    await Promise.all(obj.kept);
    expect(obj.alone.sort()).toEqual(["release x", "settle y"]);
  });
});
