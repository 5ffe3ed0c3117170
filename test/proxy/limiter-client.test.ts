import { describe, expect, it, vi } from "vitest";
import { LimiterClient, LimiterUnavailable } from "../../src/proxy/limiter-client";
import type { AcquireResult } from "../../src/limiter/types";
import { Channel } from "../../src/proxy/channel";
import { freshChannel, META, withBoth, withExchange } from "../support/exchange";

const GRANT: AcquireResult = { granted: true, leaseId: "l", waitedMs: 0, leaseTtlMs: 60_000, limit: 16 };
const req = { key: "k", provider: "openai", model: "m", leaseId: "l", cost: 1, retry: false };

/** A namespace whose stubs answer with the scripted results in turn (one new stub per get()). */
function fakeNamespace(script: (() => Promise<unknown>)[]) {
  let i = 0;
  const get = vi.fn(() => withExchange({ acquire: () => (script[i++] ?? script.at(-1)!)() }));
  return { ns: { idFromName: () => ({}), get } as never, get };
}
const flagged = (flags: object) => () => Promise.reject(Object.assign(new Error("object reset"), flags));

describe("LimiterClient", () => {
  it("retries a retryable object error with a fresh stub", async () => {
    const { ns, get } = fakeNamespace([flagged({ retryable: true }), () => Promise.resolve(GRANT)]);
    const client = new LimiterClient(ns, META, { waitUntil: () => {}, channel: freshChannel() });
    expect(await client.acquire(req, Date.now() + 5_000)).toEqual(GRANT);
    expect(get).toHaveBeenCalledTimes(2);
  });

  it("fails closed at once on an overloaded object", async () => {
    const { ns, get } = fakeNamespace([flagged({ overloaded: true, retryable: true })]);
    const client = new LimiterClient(ns, META, { waitUntil: () => {}, channel: freshChannel() });
    await expect(client.acquire(req, Date.now() + 5_000)).rejects.toBeInstanceOf(LimiterUnavailable);
    expect(get).toHaveBeenCalledTimes(1);
  });

  it("fails closed on an error that is not retryable", async () => {
    const { ns } = fakeNamespace([flagged({})]);
    await expect(new LimiterClient(ns, META, { waitUntil: () => {}, channel: freshChannel() }).acquire(req, Date.now() + 5_000)).rejects.toBeInstanceOf(LimiterUnavailable);
  });

  it("stops retrying at the deadline", async () => {
    const { ns, get } = fakeNamespace([flagged({ retryable: true })]);
    const started = Date.now();
    await expect(new LimiterClient(ns, META, { waitUntil: () => {}, channel: freshChannel() }).acquire(req, started + 300)).rejects.toBeInstanceOf(LimiterUnavailable);
    expect(get.mock.calls.length).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("gives up on an object that never answers, shortly after the deadline", async () => {
    const { ns } = fakeNamespace([() => new Promise(() => {})]);
    const started = Date.now();
    await expect(new LimiterClient(ns, META, { waitUntil: () => {}, channel: freshChannel() }).acquire(req, started + 100)).rejects.toThrow(/did not answer/);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("renews with the lease's cost, so an object that lost the lease can take it back", async () => {
    const ops: unknown[] = [];
    const stub = { exchange: async (_: unknown, batch: { t: string }[]) => (ops.push(...batch), { results: batch.map(() => true), queued: 0 }) };
    const client = new LimiterClient({ idFromName: () => ({}), get: () => stub } as never, META, { waitUntil: () => {}, channel: freshChannel() });
    const stop = client.keepAlive("l", 750, 42); // renews every 250 ms
    await vi.waitFor(() => expect(ops.length).toBeGreaterThan(0), { timeout: 2_000 });
    stop();
    expect(ops[0]).toMatchObject({ t: "renew", id: "l", cost: 42 });
  });
});

describe("LimiterClient: the channel while the key has room, a session once its queue is busy", () => {
  /** A stub counting the calls of each kind; acquires answer at once, or after `slow` ms (queued). */
  function counted(slow = 0) {
    const n = { exchange: 0, session: 0, release: 0, settle: 0 };
    const stub = withBoth({
      acquire: () => (slow ? new Promise((r) => setTimeout(() => r(GRANT), slow)) : Promise.resolve(GRANT)),
      release: async () => (n.release++, true),
      settle: async () => void n.settle++,
    });
    const ex = stub.exchange;
    const se = stub.session;
    stub.exchange = (...a) => (n.exchange++, ex(...a));
    stub.session = (...a) => (n.session++, se(...a));
    return { n, ns: { idFromName: () => ({}), get: () => stub } as never };
  }

  it("room at the key: the acquire rides the channel, no session", async () => {
    const { n, ns } = counted();
    const client = new LimiterClient(ns, META, { waitUntil: () => {}, channel: freshChannel() });
    expect(await client.acquire(req, Date.now() + 5_000)).toEqual(GRANT);
    expect(n).toMatchObject({ exchange: 1, session: 0 });
  });

  it("a busy queue: the acquire opens a session, its grant comes down the stream, and its release rides it", async () => {
    const { n, ns } = counted(30);
    const channel = freshChannel();
    channel.note({ queued: 5, room: 0 });
    const pending: Promise<unknown>[] = [];
    const client = new LimiterClient(ns, META, { waitUntil: (p) => pending.push(p), channel });
    expect(await client.acquire(req, Date.now() + 5_000)).toEqual(GRANT);
    client.release("l");
    await Promise.all(pending);
    expect(n).toEqual({ exchange: 0, session: 1, release: 1, settle: 0 });
  });

  it("a settle waited for brings back the limiter's word on the retry, on the channel and on a session alike", async () => {
    for (const busy of [false, true]) {
      const stub = withBoth({ acquire: async () => GRANT, settle: async () => ({ retry: "now" as const }) });
      const channel = freshChannel();
      if (busy) channel.note({ queued: 3, room: 0 });
      const client = new LimiterClient({ idFromName: () => ({}), get: () => stub } as never, META, { waitUntil: () => {}, channel });
      await client.acquire(req, Date.now() + 5_000);
      const outcome = { cls: "transient", status: 503, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: false, release: true } as const;
      expect(await client.settleNow("l", outcome)).toEqual({ retry: "now" });
    }
  });

  it("after its session broke, the request's ops still reach the object (on the channel, or on a call of their own)", async () => {
    const calls: string[] = [];
    const stub = {
      session: async () => ({ results: [GRANT], queued: 1, answers: new ReadableStream({ start: (c) => c.error(new Error("object restarted")) }) }),
      release: async (id: string) => (calls.push(`release ${id}`), true),
    };
    const channel = freshChannel();
    channel.note({ queued: 1, room: 0 });
    const pending: Promise<unknown>[] = [];
    const client = new LimiterClient({ idFromName: () => ({}), get: () => stub } as never, META, { waitUntil: (p) => pending.push(p), channel });
    expect(await client.acquire(req, Date.now() + 5_000)).toEqual(GRANT);
    await Promise.allSettled(pending.splice(0));
    client.release("l");
    await vi.waitFor(() => expect(calls).toEqual(["release l"]));
  });
});

describe("LimiterClient with a ticket", () => {
  /** A channel that holds one ticket of the key's current epoch, and a stub that records every batch. */
  function holding() {
    const batches: { t: string; id?: string; cost?: number; caller?: string }[][] = [];
    const stub = { exchange: async (_: unknown, ops: { t: string }[]) => (batches.push(ops as never), { results: ops.map(() => GRANT), queued: 0, room: 8, epoch: 3 }) };
    // Its background ops wait a moment for company, as an isolate's channel's do.
    const channel = new Channel(META, Date.now, 30);
    const carrier = { stub: () => stub as never, fresh: () => stub as never, waitUntil: () => {} };
    // A full hand: its uses need not hurry to bring more.
    const ids = Array.from({ length: 8 }, (_, i) => `~t.${i + 1}`);
    channel.answered({ queued: 0, room: 8, epoch: 3, tickets: { ids, cost: 50, leaseTtlMs: 60_000, limit: 16, ratePerMin: 600 } }, carrier);
    const pending: Promise<unknown>[] = [];
    const client = new LimiterClient({ idFromName: () => ({}), get: () => stub } as never, META, { waitUntil: (p) => pending.push(p), channel });
    return { batches, client, pending };
  }
  const ok = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: true } as const;

  it("goes upstream with no call; its use, then its settle and release, go back under the ticket's id", async () => {
    const { batches, client, pending } = holding();
    const r = await client.acquire({ ...req, cost: 40, caller: "alice", priority: "high" }, Date.now() + 5_000);
    expect(r).toEqual({ granted: true, leaseId: "l", waitedMs: 0, leaseTtlMs: 60_000, limit: 16, ratePerMin: 600 });
    expect(batches).toEqual([]);
    client.settle("l", ok);
    await vi.waitFor(() => expect(batches.length).toBe(1));
    await Promise.all(pending);
    // One call for both, off the request's path (a release rides its settle: a plain answer's one op).
    expect(batches).toEqual([[
      expect.objectContaining({ t: "use", id: "~t.1", cost: 40, caller: "alice", priority: "high" }),
      expect.objectContaining({ t: "settle", id: "~t.1", outcome: ok }),
    ]]);
  });

  it("a retry, a pooled request, or a request larger than the ticket asks the object as before", async () => {
    for (const o of [{ retry: true }, { pooled: true }, { cost: 51 }]) {
      const { batches, client } = holding();
      await client.acquire({ ...req, ...o }, Date.now() + 5_000);
      expect(batches.flat()[0]).toMatchObject({ t: "acquire", req: { leaseId: "l" } });
    }
  });
});
