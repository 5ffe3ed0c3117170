// The shard objects' side of the cache: identical misses make one upstream call, a failed one sends
// each waiter upstream itself, and a hit never reaches the key's limiter.
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LimiterSnapshot } from "../../src/limiter/types";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { admin, caller, numbered, sleep, stored, TOKEN, waitingInShards } from "../support/cache";

afterEach(() => vi.restoreAllMocks());

describe("cache: the limiter and identical misses", () => {
  it("a hit never touches the key's limiter: no slot, no quota, not in its metrics", async () => {
    numbered();
    const c = caller();
    const first = await c.send();
    const key = first.res.headers.get("x-slotgate-key")!;
    await stored(c.ns);
    const state = async () => (await (await admin(`/admin/keys/${encodeURIComponent(key)}`)).json()) as LimiterSnapshot;
    await vi.waitFor(async () => expect((await state()).concurrency.inFlight).toBe(0));
    // Hold the key shut: any request that reached its limiter would wait for a slot.
    expect((await (await exports.default.fetch(`http://gateway/admin/keys/${encodeURIComponent(key)}/config`, {
      method: "PUT", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ limit: 1, maxConcurrency: 1 }),
    })).status)).toBe(200);
    const before = await state();
    const hits = await Promise.all(Array.from({ length: 8 }, () => c.send()));
    expect(hits.map((h) => h.cache)).toEqual(Array(8).fill("hit"));
    await sleep(100);
    const after = await state();
    expect(after.metrics.totalRequests).toBe(before.metrics.totalRequests);
    expect(after.metrics.completedRequests).toBe(before.metrics.completedRequests);
  });

  it("16 identical misses at once make exactly one upstream call; the others wait for it in the shard and are answered from it", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { calls } = mockUpstream(async (_, n) => {
      await gate;
      return json({ ...CHAT, id: `chatcmpl-${n}` });
    });
    const c = caller();
    const all = Promise.all(Array.from({ length: 16 }, () => c.send()));
    // The one upstream call is held until the 15 others wait for it in the shard: none of them can
    // find a stored answer instead, and without collapsing they would each be out upstream.
    await vi.waitFor(async () => expect(await waitingInShards()).toBe(15), { timeout: 10_000 });
    expect(calls).toHaveLength(1);
    open();
    const done = await all;
    expect(calls).toHaveLength(1);
    expect(done.map((a) => a.res.status)).toEqual(Array(16).fill(200));
    expect(new Set(done.map((a) => a.text))).toEqual(new Set([JSON.stringify({ ...CHAT, id: "chatcmpl-1" })]));
    expect(done.map((a) => a.cache).sort()).toEqual([...Array(15).fill("collapsed"), "miss"]);
    expect(done.find((a) => a.cache === "collapsed")?.status).toBe("slotgate; fwd=miss; collapsed");
    expect(await waitingInShards()).toBe(0);
  });

  it("when the one upstream call fails, each waiter goes upstream itself", async () => {
    const { calls } = mockUpstream(async (_, n) => {
      await sleep(n === 1 ? 500 : 10); // long enough for every waiter to have joined the first call
      return n === 1 ? json({ error: { message: "bad", type: "invalid_request_error" } }, 400) : json(CHAT);
    });
    const c = caller();
    const all = await Promise.all(Array.from({ length: 6 }, () => c.send()));
    expect(all.map((a) => a.res.status).sort()).toEqual([200, 200, 200, 200, 200, 400]);
    expect(calls).toHaveLength(6);
  });
});
