// A request's session with a key's real Limiter (inside workerd): its first acquire is the one
// call, and everything after it (a queued grant, settles, renewals, the release) rides the
// session's streams. A key whose queue is busy then costs its object one call a request.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { SettleRequest } from "../../src/limiter/types";
import { LimiterClient } from "../../src/proxy/limiter-client";

const OK: SettleRequest = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: true };

let n = 0;
function key(label: string) {
  const meta = { key: `openai:session-${label}-${++n}:00000000000000cd`, provider: "openai", model: "session" };
  const stub = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
  const pending: Promise<unknown>[] = [];
  /** One request's client, as the proxy makes one per request and key. */
  const request = () => new LimiterClient(env.LIMITER, meta, { waitUntil: (p) => pending.push(p) });
  const settled = () => Promise.allSettled(pending.splice(0));
  return { meta, stub, request, settled };
}

const acquire = (c: LimiterClient, leaseId: string) => c.acquire({ key: "", provider: "openai", model: "session", leaseId, cost: 1, retry: false }, Date.now() + 10_000);

describe("a request's session with its key's limiter", () => {
  it("a queued request is granted down its stream when a slot frees: one call a request, its release included", async () => {
    const k = key("busy");
    await k.stub.configure({ minConcurrency: 1, maxConcurrency: 1, limit: 1 });
    const before = (await k.stub.metrics()).counters;
    const [a, b, c] = [k.request(), k.request(), k.request()];
    expect(await acquire(a, "a")).toMatchObject({ granted: true });
    const waitingB = acquire(b, "b");
    const waitingC = acquire(c, "c");
    await new Promise((r) => setTimeout(r, 30));
    expect((await k.stub.state()).concurrency).toMatchObject({ inFlight: 1, queued: 2 });
    a.settle("a", OK);
    expect(await waitingB).toMatchObject({ granted: true });
    b.release("b");
    expect(await waitingC).toMatchObject({ granted: true });
    c.release("c");
    await k.settled();
    await expect.poll(async () => (await k.stub.state()).concurrency.inFlight).toBe(0);
    const after = (await k.stub.metrics()).counters;
    // Three requests, three calls; their six ops (three acquires, a settle, two releases) rode them.
    expect(after.calls - before.calls).toBe(3);
    expect(after.ops - before.ops).toBe(6);
  });

  it("a retry after a settle the request waits for stays on the same session", async () => {
    const k = key("retry");
    const before = (await k.stub.metrics()).counters;
    const r = k.request();
    expect(await acquire(r, "r:1")).toMatchObject({ granted: true });
    await r.settleNow("r:1", { ...OK, cls: "transient", status: 503, final: false });
    expect(await acquire(r, "r:2")).toMatchObject({ granted: true });
    r.settle("r:2", OK);
    await k.settled();
    await expect.poll(async () => (await k.stub.state()).concurrency.inFlight).toBe(0);
    const after = (await k.stub.metrics()).counters;
    expect(after.calls - before.calls).toBe(1);
    expect(after.ops - before.ops).toBe(4);
  });

  it("renewals ride the session while the answer streams; a turned-away acquire ends it", async () => {
    const k = key("renew");
    const r = k.request();
    expect(await acquire(r, "s")).toMatchObject({ granted: true });
    const before = (await k.stub.metrics()).counters;
    const stop = r.keepAlive("s", 1_000, 1); // every 333 ms
    await new Promise((res) => setTimeout(res, 800));
    stop();
    r.release("s");
    await k.settled();
    const after = (await k.stub.metrics()).counters;
    expect(after.calls - before.calls).toBe(0);
    expect(after.ops - before.ops).toBeGreaterThanOrEqual(3); // two renewals and the release
    // A request refused at its deadline has nothing more to say: the next one opens its own session.
    await k.stub.configure({ minConcurrency: 1, maxConcurrency: 1, limit: 1 });
    const holder = k.request();
    await acquire(holder, "h");
    const late = k.request();
    const refused = await late.acquire({ key: "", provider: "openai", model: "session", leaseId: "late", cost: 1, retry: false }, Date.now() + 50);
    expect(refused).toMatchObject({ granted: false, reason: "queue_timeout" });
    holder.release("h");
    await k.settled();
  });
});
