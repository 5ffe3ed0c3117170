import { describe, expect, it } from "vitest";
import { type Carrier, Channel, type Stub } from "../../src/proxy/channel";
import type { ExchangeReply, KeyMeta, Op, Tickets } from "../../src/limiter/types";
import { TICKET_VALID_MS, TICKETS_PER_ISOLATE } from "../../src/limiter/tickets/policy";
import type { Ask } from "../../src/limiter/tickets/policy";
import { HeldTickets } from "../../src/limiter/tickets/isolate";

const META: KeyMeta = { key: "openai:m:0", provider: "openai", model: "m" };
const acquire = (id: string): Op => ({ t: "acquire", req: { leaseId: id, cost: 1, retry: false, waitMs: 1_000 } });
const release = (id: string): Op => ({ t: "release", id });
const settle = (id: string): Op => ({ t: "settle", id, outcome: { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: false } });
const turn = () => new Promise((r) => setTimeout(r, 0));

/** A fake object: records each batch; answers acquires granted; `hold` keeps batches out until released. */
function fakeObject(queued = 0, room = 100) {
  const batches: Op[][] = [];
  /** What each batch asked for, and what the object answers: its epoch, and tickets for an ask. */
  const asks: (Ask | undefined)[] = [];
  const key = { epoch: 1, issued: 0 };
  const alone: string[] = [];
  const held: (() => void)[] = [];
  let hold = false;
  let fail = false;
  const stub: Stub = {
    exchange: (async (_meta: KeyMeta, ops: Op[], ask?: Ask): Promise<ExchangeReply> => {
      batches.push(ops);
      asks.push(ask);
      if (hold) await new Promise<void>((r) => held.push(r));
      if (fail) throw Object.assign(new Error("object reset"), { retryable: true });
      const tickets: Tickets | undefined = ask && { ids: Array.from({ length: ask.want }, () => `~k.${++key.issued}`), cost: ask.cost, leaseTtlMs: 60_000, limit: 16 };
      return { results: ops.map((o) => (o.t === "acquire" ? { granted: true, leaseId: o.req.leaseId, waitedMs: 0, leaseTtlMs: 60_000, limit: 16 } : true)), queued, room, epoch: key.epoch, ...(tickets && { tickets }) };
    }) as never,
    settle: (async (id: string) => void alone.push(`settle ${id}`)) as never,
    release: (async (id: string) => (alone.push(`release ${id}`), true)) as never,
    renew: (async () => true) as never,
    cancel: (async () => true) as never,
  };
  const kept: Promise<unknown>[] = [];
  const carrier: Carrier = { stub: () => stub, fresh: () => stub, waitUntil: (p) => kept.push(p) };
  return {
    batches, alone, carrier, kept, asks, key,
    hold: (on: boolean) => (hold = on),
    fail: (on: boolean) => (fail = on),
    letGo: () => held.splice(0).forEach((r) => r()),
    names: () => batches.map((b) => b.map((o) => `${o.t} ${o.t === "acquire" ? o.req.leaseId : o.id}`)),
    /** An acquire of `cost`, as the limiter client makes it: a ticket if one is held, else a call. */
    acquire: async (ch: Channel, id: string, cost = 1) => ch.redeem(cost)?.id ?? (await ch.call({ t: "acquire", req: { leaseId: id, cost, retry: false, waitMs: 1_000 } }, carrier), null),
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

describe("HeldTickets: one isolate's tickets for one key", () => {
  const grant = (ids: string[], cost = 100): Tickets => ({ ids, cost, leaseTtlMs: 60_000, limit: 16 });

  it("asks for none for a first request, then about as many as it sent in the last period, less what it holds", () => {
    const h = new HeldTickets();
    expect(h.take(10, 0)).toBeNull();
    expect(h.ask(0)).toBeUndefined();
    h.take(10, 100);
    h.take(30, 200);
    expect(h.ask(200)).toEqual({ want: 2, cost: 30 });
    h.heard({ epoch: 1, tickets: grant(["~a"]) }, 200);
    expect(h.ask(200)).toEqual({ want: 1, cost: 30 });
    // A second later the old requests no longer count.
    expect(h.ask(200 + TICKET_VALID_MS + 100)).toBeUndefined();
    for (let i = 0; i < 50; i++) h.take(10, 300);
    expect(h.ask(300)!.want).toBe(TICKETS_PER_ISOLATE);
  });

  it("hands a request a ticket of the key's last epoch, within its time, for a request no larger than it", () => {
    const h = new HeldTickets();
    h.heard({ epoch: 4, tickets: grant(["~a", "~b"], 100) }, 1_000);
    expect(h.take(101, 1_100)).toBeNull();
    expect(h.take(100, 1_100)).toEqual({ id: "~a", leaseTtlMs: 60_000, limit: 16 });
    expect(h.take(5, 1_000 + TICKET_VALID_MS)).toBeNull(); // its time counts from the batch's send
    expect(h.expired(1_000 + TICKET_VALID_MS)).toEqual(["~b"]);
    expect(h.size).toBe(0);
  });

  it("gives back every ticket of an older epoch once the key's answer says it changed", () => {
    const h = new HeldTickets();
    h.heard({ epoch: 4, tickets: grant(["~a", "~b"]) }, 0);
    expect(h.heard({ epoch: 4 }, 10)).toEqual([]);
    expect(h.heard({ epoch: 5 }, 20)).toEqual(["~a", "~b"]);
    expect(h.take(1, 30)).toBeNull();
  });
});

describe("Channel with tickets", () => {
  it("asks for tickets on a key with room, once this isolate has sent it requests lately; a request that finds one makes no call", async () => {
    const obj = fakeObject(0);
    const ch = new Channel(META, Date.now, 0);
    expect(await obj.acquire(ch, "a")).toBeNull();
    expect(obj.asks).toEqual([undefined]); // a first request asks for none: an idle key behaves as before
    expect(await obj.acquire(ch, "b")).toBeNull();
    expect(obj.asks[1]).toEqual({ want: 1, cost: 1 });
    expect(await obj.acquire(ch, "c")).toBe("~k.1");
    expect(obj.batches).toHaveLength(2);
  });

  it("down to half its tickets, a request's use leaves at once and asks for more; not while an ask is out", async () => {
    const obj = fakeObject(0);
    const t = manual();
    const ch = new Channel(META, t.now, 50, t.set);
    for (const id of ["a", "b"]) await obj.acquire(ch, id);
    expect(ch.runningLow).toBe(true); // one ticket held, the cap is 8
    const ticket = ch.redeem(1)!;
    obj.hold(true);
    ch.post({ t: "use", id: ticket.id, cost: 1 }, obj.carrier, ch.runningLow);
    await turn();
    expect(obj.names().at(-1)).toEqual([`use ${ticket.id}`]); // it did not wait 50 ms for company
    expect(obj.asks.at(-1)).toMatchObject({ want: expect.any(Number) });
    expect(ch.runningLow).toBe(false); // its ask is out
    obj.letGo();
    await turn();
    await turn();
    expect(ch.redeem(1)).not.toBeNull(); // what it brought
  });

  it("asks for none while the key is busy", async () => {
    const obj = fakeObject(2, 0);
    const ch = new Channel(META, Date.now, 0);
    for (const id of ["a", "b", "c"]) await obj.acquire(ch, id);
    expect(obj.asks).toEqual([undefined, undefined, undefined]);
  });

  it("gives back the tickets it holds when the key's epoch changes, with its next batch", async () => {
    const obj = fakeObject(0);
    const t = manual();
    const ch = new Channel(META, t.now, 0, t.set);
    // a and b call (b brings one ticket), c goes on it, d calls and brings three.
    for (const id of ["a", "b", "c", "d"]) await obj.acquire(ch, id);
    expect(obj.key.issued).toBe(4);
    obj.key.epoch = 2;
    ch.post(release("x"), obj.carrier, true);
    await turn();
    await turn();
    const last = obj.names().at(-1)!;
    expect(last.filter((n) => n.startsWith("release ~k."))).toHaveLength(3);
    // That batch asked again: what it holds now came with the new epoch (never one of the old).
    const held: number[] = [];
    for (let t = ch.redeem(1); t; t = ch.redeem(1)) held.push(Number(t.id.slice(3)));
    expect(held.length).toBeGreaterThan(0);
    expect(held.every((n) => n > 4)).toBe(true);
  });

  it("gives back tickets past their time with the next batch, or on their own from the request that brought them", async () => {
    const obj = fakeObject(0);
    const t = manual();
    const ch = new Channel(META, t.now, 0, t.set);
    for (const id of ["a", "b"]) await obj.acquire(ch, id);
    expect(obj.key.issued).toBe(1);
    t.advance(TICKET_VALID_MS);
    await turn();
    await turn();
    expect(obj.names().at(-1)).toEqual(["release ~k.1"]);
    expect(obj.kept.length).toBeGreaterThan(0);
  });
});
