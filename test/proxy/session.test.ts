// Requests against a key's real Limiter (inside workerd) while its queue is busy: each request's
// first acquire opens a session, and everything after it (its queued grant, settles, renewals, a
// retry, the release) rides the session's streams. So each costs its key's object one call, where
// the channel's way was three (a batch, a second call to wait on its place, a release of its own).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SettleRequest } from "../../src/limiter/types";
import { Channel } from "../../src/proxy/channel";
import { LimiterClient } from "../../src/proxy/limiter-client";

const OK: SettleRequest = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: true };

let n = 0;
/** A key held at one slot, and one isolate's channel to it that has already heard it is full. */
async function busyKey(label: string) {
  const meta = { key: `openai:session-${label}-${++n}:00000000000000cd`, provider: "openai", model: "session" };
  const stub = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
  await stub.configure({ minConcurrency: 1, maxConcurrency: 1, limit: 1 });
  const channel = new Channel(meta, Date.now, 0);
  channel.note({ queued: 0, room: 0 });
  const pending: Promise<unknown>[] = [];
  /** One request's client, as the proxy makes one per request and key. */
  const request = () => new LimiterClient(env.LIMITER, meta, { waitUntil: (p) => pending.push(p), channel });
  const settled = () => Promise.allSettled(pending.splice(0));
  const counters = async () => (await stub.metrics()).counters;
  return { meta, stub, request, settled, counters };
}

const acquire = (c: LimiterClient, leaseId: string, waitMs = 10_000) => c.acquire({ key: "", provider: "openai", model: "session", leaseId, cost: 1, retry: false }, Date.now() + waitMs);

describe("a request's session with its key's limiter, while the queue is busy", () => {
  it("queued requests are granted down their streams as slots free: one call a request, its release included", async () => {
    const k = await busyKey("busy");
    const before = await k.counters();
    const [a, b, c] = [k.request(), k.request(), k.request()];
    expect(await acquire(a, "a")).toMatchObject({ granted: true });
    const waitingB = acquire(b, "b");
    const waitingC = acquire(c, "c");
    await expect.poll(async () => (await k.stub.state()).concurrency).toMatchObject({ inFlight: 1, queued: 2 });
    a.settle("a", OK);
    expect(await waitingB).toMatchObject({ granted: true });
    b.release("b");
    expect(await waitingC).toMatchObject({ granted: true });
    c.release("c");
    await k.settled();
    await expect.poll(async () => (await k.stub.state()).concurrency.inFlight).toBe(0);
    const after = await k.counters();
    // Three requests, three calls; their six ops (three acquires, a settle, two releases) rode them.
    expect(after.calls - before.calls).toBe(3);
    expect(after.ops - before.ops).toBe(6);
  });

  it("a retry after a settle the request waits for stays on the same session; renewals ride it", async () => {
    const k = await busyKey("retry");
    const before = await k.counters();
    const r = k.request();
    expect(await acquire(r, "r:1")).toMatchObject({ granted: true });
    await r.settleNow("r:1", { ...OK, cls: "transient", status: 503, final: false });
    expect(await acquire(r, "r:2")).toMatchObject({ granted: true });
    const stop = r.keepAlive("r:2", 1_000, 1); // every 333 ms
    await new Promise((res) => setTimeout(res, 800));
    stop();
    r.settle("r:2", OK);
    await k.settled();
    await expect.poll(async () => (await k.stub.state()).concurrency.inFlight).toBe(0);
    const after = await k.counters();
    expect(after.calls - before.calls).toBe(1);
    // Two acquires, two settles, and the renewals.
    expect(after.ops - before.ops).toBeGreaterThanOrEqual(6);
  });

  it("a request turned away at its deadline ends its session; the next request opens its own", async () => {
    const k = await busyKey("late");
    const holder = k.request();
    await acquire(holder, "h");
    const late = k.request();
    expect(await acquire(late, "late", 50)).toMatchObject({ granted: false, reason: "queue_timeout" });
    holder.release("h");
    await k.settled();
    await expect.poll(async () => (await k.stub.state()).concurrency).toMatchObject({ inFlight: 0, queued: 0 });
  });
});
