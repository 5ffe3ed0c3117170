// The cache when whoever holds a credential is not fully trusted (issue 26): only inference is
// cached, the headers that change an answer are keyed, nobody's identity is replayed, counters and
// copies stay bounded, and a waiter keeps its own deadline. Through the Worker, in workerd.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type CacheShard, shardStub } from "../../src/cache/object";
import { COUNTED_NAMESPACES_MAX, OVERFLOW_NAMESPACE } from "../../src/cache/stats";
import { heldBytes } from "../../src/proxy/held";
import { callWith } from "../support/app";
import { CHAT, chat, json, mockUpstream } from "../support/upstream";
import { caller, sleep, stats, stored, uid, waitingInShards } from "../support/cache";

afterEach(() => vi.restoreAllMocks());

describe("cache: only inference", () => {
  it("a repeated POST /v1/batches makes a new batch each time (bypass); replay only on it is 400", async () => {
    const { calls } = mockUpstream((_, n) => json({ id: `batch_${n}`, object: "batch" }));
    const c = caller();
    const batch = (headers: Record<string, string> = {}) => c.send({ path: "/openai/v1/batches", body: { input_file_id: "file-1", endpoint: "/v1/chat/completions", completion_window: "24h" }, headers });
    const a = await batch();
    await sleep(100); // were it stored, it would be by now
    const b = await batch();
    expect([a.cache, b.cache]).toEqual(["bypass", "bypass"]);
    expect([JSON.parse(a.text).id, JSON.parse(b.text).id]).toEqual(["batch_1", "batch_2"]);
    const only = await batch({ "x-slotgate-cache": "only" });
    expect(only.res.status).toBe(400);
    expect(JSON.parse(only.text).error).toMatchObject({ type: "invalid_request", message: expect.stringMatching(/only inference/) });
    expect(calls).toHaveLength(2);
  });
});

describe("cache: semantic headers", () => {
  it("two anthropic-beta values are two entries; the same value again is a hit", async () => {
    const { calls } = mockUpstream((_, n) => json({ id: `msg_${n}`, type: "message", role: "assistant", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn" }));
    const c = caller();
    const ask = (beta: string) => c.send({
      path: "/anthropic/v1/messages",
      body: { model: "claude-test", max_tokens: 16, messages: [{ role: "user", content: "hi" }] },
      headers: { "anthropic-version": "2023-06-01", "anthropic-beta": beta },
    });
    expect((await ask("feature-a-2025-01-01")).cache).toBe("miss");
    await stored(c.ns);
    const other = await ask("feature-b-2025-01-01");
    expect(other.cache).toBe("miss");
    expect(JSON.parse(other.text).id).toBe("msg_2");
    await stored(c.ns, 2);
    const again = await ask("feature-a-2025-01-01");
    expect([again.cache, JSON.parse(again.text).id]).toEqual(["hit", "msg_1"]);
    expect(calls).toHaveLength(2);
  });
});

describe("cache: whose answer it was", () => {
  it("a hit never replays the organization, project or cookies of the account that answered", async () => {
    const identity = { "openai-organization": "org-member-a", "openai-project": "proj_a", "anthropic-organization-id": "ant-org-a", "set-cookie": "__cf_bm=a; path=/" };
    mockUpstream(() => json(CHAT, 200, { ...identity, "x-request-id": "req_1" }));
    const c = caller();
    const first = await c.send();
    expect(first.res.headers.get("openai-organization")).toBe("org-member-a"); // the caller's own answer is untouched
    await stored(c.ns);
    const hit = await c.send();
    expect(hit.cache).toBe("hit");
    expect(hit.res.headers.get("x-request-id")).toBe("req_1");
    for (const name of Object.keys(identity)) expect(hit.res.headers.get(name), name).toBeNull();
  });
});

describe("cache: bounded", () => {
  it("a copy past BODY_BUDGET_BYTES stops: the caller gets the whole answer, nothing is stored, nothing stays held", async () => {
    const big = { ...CHAT, pad: "x".repeat(60_000) };
    const { calls } = mockUpstream(() => json(big));
    const ns = `t-${uid()}`;
    const ask = (budget: string) => callWith("/openai/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer sk-budget-${ns}`, "content-type": "application/json", "x-slotgate-cache": "on", "x-slotgate-cache-namespace": ns },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "big" }] }),
    }, { BODY_BUDGET_BYTES: budget });
    const before = heldBytes();
    const first = await ask("20000");
    expect(await first.json()).toEqual(big);
    expect(heldBytes()).toBe(before);
    const second = await ask("20000");
    expect(second.headers.get("x-slotgate-cache")).toBe("miss");
    expect(calls).toHaveLength(2);
    // With room for it, the same answer is stored: it was the budget that stopped the copy.
    await ask("200000");
    expect((await ask("200000")).headers.get("x-slotgate-cache")).toBe("hit");
    expect(heldBytes()).toBe(before);
  });

  it("a flood of namespaces keeps at most COUNTED_NAMESPACES_MAX in a shard's counters; the rest are counted as overflow", async () => {
    const shard = shardStub(env.CACHE_SHARD, 0);
    const flood = (from: number, n: number) => shard.count(Array.from({ length: n }, (_, i) => [`flood-${uid()}-${from + i}`, "bypass", 1]));
    const before = (await stats()).bypassed;
    await flood(0, COUNTED_NAMESPACES_MAX);
    await flood(COUNTED_NAMESPACES_MAX, 250);
    const kept = await runInDurableObject(shard, (o: CacheShard, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT count(DISTINCT namespace) AS n FROM counts").one().n);
    expect(kept).toBeLessThanOrEqual(COUNTED_NAMESPACES_MAX + 1);
    const s = await stats();
    expect(s.bypassed - before).toBeGreaterThanOrEqual(COUNTED_NAMESPACES_MAX + 250); // every count kept in the totals
    expect(s.namespaces.find((n) => n.namespace === OVERFLOW_NAMESPACE)?.bypassed).toBeGreaterThanOrEqual(250);
  });
});

describe("cache: a waiter keeps its own deadline", () => {
  it("a waiter whose deadline is shorter than its leader's stops waiting at it and goes on as the request path does", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { calls } = numberedAfter(gate);
    const c = caller();
    const leader = c.send();
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    const t0 = Date.now();
    const waiter = c.send({ headers: { "x-slotgate-deadline-ms": "400" } });
    await vi.waitFor(async () => expect(await waitingInShards()).toBe(1)); // it waits for the leader
    const early = await Promise.race([waiter, sleep(5_000).then(() => null)]);
    const waited = Date.now() - t0;
    open();
    expect(early, "the waiter was still waiting for its leader").not.toBeNull();
    expect(waited).toBeGreaterThanOrEqual(350);
    // Its own deadline past, it goes on as any request would: the key's one slot is the leader's (a
    // new key sends one request until it has heard from the provider), so it is the request path's
    // queue_timeout, with no upstream call of its own.
    expect([early!.cache, early!.res.status, early!.res.headers.get("x-slotgate-error")]).toEqual(["miss", 429, "queue_timeout"]);
    expect(calls).toHaveLength(1);
    expect(await waitingInShards()).toBe(0);
    expect((await leader).res.status).toBe(200);
  });
});

/** numbered(), except the first call waits for `gate`. */
function numberedAfter(gate: Promise<void>) {
  return mockUpstream(async (_, n) => {
    if (n === 1) await gate;
    return json({ ...CHAT, id: `chatcmpl-${n}` });
  });
}
