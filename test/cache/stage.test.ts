// The response cache through the Worker, in workerd with its R2 bucket and shard objects: what is
// stored and replayed, who may read it, and the request directives.
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHAT, chat, json, mockUpstream } from "../support/upstream";
import { STREAM_BODY, SSE, caller, nsStats, numbered, sleep, sse, stored, uid } from "../support/cache";

afterEach(() => vi.restoreAllMocks());

describe("cache: miss, store, hit", () => {
  it("a miss is stored and the same request is then answered from it, with age and cache-status", async () => {
    const { calls } = numbered();
    const c = caller();
    const first = await c.send();
    expect([first.res.status, first.cache, first.status]).toEqual([200, "miss", "slotgate; fwd=miss; stored"]);
    await stored(c.ns);
    const second = await c.send();
    expect([second.res.status, second.cache, second.status]).toEqual([200, "hit", "slotgate; hit"]);
    expect(second.res.headers.get("age")).toMatch(/^\d+$/);
    expect(second.text).toBe(first.text);
    expect(second.res.headers.get("x-request-id")).toBe("req_1");
    expect(second.res.headers.get("x-ratelimit-remaining-requests")).toBeNull(); // the provider's state then is not its state now
    expect(second.res.headers.get("x-slotgate-attempts")).toBe("0");
    expect(calls).toHaveLength(1);
  });

  it("the body is keyed as canonical JSON: key order does not matter, max_tokens and seed do", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send({ body: { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: "hi" }] } });
    await stored(c.ns);
    expect((await c.send({ body: { messages: [{ content: "hi", role: "user" }], max_tokens: 16, model: "gpt-4o-mini" } })).cache).toBe("hit");
    expect((await c.send({ body: { model: "gpt-4o-mini", max_tokens: 17, messages: [{ role: "user", content: "hi" }] } })).cache).toBe("miss");
    expect((await c.send({ body: { model: "gpt-4o-mini", max_tokens: 16, seed: 1, messages: [{ role: "user", content: "hi" }] } })).cache).toBe("miss");
    expect(calls).toHaveLength(3);
  });

  it("the path and query are part of the key", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    const other = await chat({ key: c.key, path: "/openai/v1/chat/completions?api-version=2", headers: { "x-slotgate-cache": "on", "x-slotgate-cache-namespace": c.ns } });
    expect(other.headers.get("x-slotgate-cache")).toBe("miss");
    expect(calls).toHaveLength(2);
  });

  it("a streamed hit replays the original SSE bytes", async () => {
    mockUpstream(() => sse(SSE));
    const c = caller();
    const first = await c.send({ body: STREAM_BODY });
    expect(first.text).toBe(SSE.join(""));
    await stored(c.ns);
    const second = await c.send({ body: STREAM_BODY });
    expect(second.cache).toBe("hit");
    expect(second.res.headers.get("content-type")).toBe("text/event-stream");
    expect(second.text).toBe(SSE.join(""));
  });
});

describe("cache: who reads what", () => {
  it("one credential never reads another's entries", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    const other = await c.send({ key: `sk-other-${uid()}` });
    expect(other.cache).toBe("miss");
    expect(JSON.parse(other.text).id).toBe("chatcmpl-2");
    expect(calls).toHaveLength(2);
  });

  it("namespaces and samples are separate entries; a sample repeats itself", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    const elsewhere = await c.send({ headers: { "x-slotgate-cache-namespace": `${c.ns}-b` } });
    expect(elsewhere.cache).toBe("miss");
    const s1 = await c.send({ headers: { "x-slotgate-cache-sample": "1" } });
    const s2 = await c.send({ headers: { "x-slotgate-cache-sample": "2" } });
    expect([s1.cache, s2.cache]).toEqual(["miss", "miss"]);
    expect(new Set([s1.text, s2.text]).size).toBe(2);
    await stored(c.ns, 3);
    const again = await c.send({ headers: { "x-slotgate-cache-sample": "1" } });
    expect(again.cache).toBe("hit");
    expect(again.text).toBe(s1.text);
    expect((await c.send({ headers: { "x-slotgate-cache-sample": "0" } })).cache).toBe("hit"); // no sample is sample 0
    expect(calls).toHaveLength(4);
  });
});

describe("cache: request directives", () => {
  it("only: a miss is 504 cache_miss and nothing goes upstream; a stored answer is replayed", async () => {
    const { calls } = numbered();
    const c = caller();
    const miss = await c.send({ headers: { "x-slotgate-cache": "only" } });
    expect(miss.res.status).toBe(504);
    expect(miss.res.headers.get("x-slotgate-error")).toBe("cache_miss");
    expect(JSON.parse(miss.text).error.type).toBe("cache_miss");
    expect(miss.cache).toBe("miss");
    expect(calls).toHaveLength(0);
    const ifCached = await c.send({ headers: { "x-slotgate-cache": "", "cache-control": "only-if-cached" } });
    expect(ifCached.res.status).toBe(400); // an empty x-slotgate-cache is malformed, not absent
    const viaDirective = await chat({ key: c.key, headers: { "x-slotgate-cache-namespace": c.ns, "cache-control": "only-if-cached" } });
    expect(viaDirective.status).toBe(504);
    await c.send();
    await stored(c.ns);
    expect((await c.send({ headers: { "x-slotgate-cache": "only" } })).cache).toBe("hit");
    expect(calls).toHaveLength(1);
  });

  it("no-cache refreshes: it goes upstream and what it stores is what later hits get", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    const refresh = await c.send({ headers: { "cache-control": "no-cache" } });
    expect([refresh.cache, refresh.status]).toEqual(["miss", "slotgate; fwd=request; stored"]);
    expect(JSON.parse(refresh.text).id).toBe("chatcmpl-2");
    await vi.waitFor(async () => expect(JSON.parse((await c.send()).text).id).toBe("chatcmpl-2"));
    expect(calls).toHaveLength(2);
  });

  it("no-store reads but never writes", async () => {
    const { calls } = numbered();
    const c = caller();
    const a = await c.send({ headers: { "cache-control": "no-store" } });
    expect([a.cache, a.status]).toEqual(["miss", "slotgate; fwd=miss"]);
    await sleep(100);
    expect((await c.send({ headers: { "cache-control": "no-store" } })).cache).toBe("miss");
    expect((await nsStats(c.ns))?.entries ?? 0).toBe(0);
    expect(calls).toHaveLength(2);
    await c.send();
    await stored(c.ns);
    expect((await c.send({ headers: { "cache-control": "no-store" } })).cache).toBe("hit");
  });

  it("max-age: an entry older than N seconds is not used", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    await sleep(20);
    expect((await c.send({ headers: { "cache-control": "max-age=3600" } })).cache).toBe("hit");
    const old = await c.send({ headers: { "cache-control": "max-age=0" } });
    expect([old.cache, old.status]).toEqual(["miss", "slotgate; fwd=stale; stored"]);
    expect(calls).toHaveLength(2);
  });

  it("off, cf-aig-skip-cache and CACHE=off without asking all bypass", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send();
    await stored(c.ns);
    for (const headers of [{ "x-slotgate-cache": "off" }, { "cf-aig-skip-cache": "true" }] as Record<string, string>[]) {
      const res = await chat({ key: c.key, headers: { "x-slotgate-cache-namespace": c.ns, ...headers } });
      expect([res.headers.get("x-slotgate-cache"), res.headers.get("cache-status")]).toEqual(["bypass", "slotgate; fwd=bypass"]);
    }
    const unasked = await chat({ key: c.key, headers: { "x-slotgate-cache-namespace": c.ns } });
    expect(unasked.headers.get("x-slotgate-cache")).toBe("bypass");
    expect(calls).toHaveLength(4);
    // Each answer that said bypass is counted as one, the one nobody asked the cache for too.
    await vi.waitFor(async () => expect((await nsStats(c.ns))?.bypassed).toBe(3), { timeout: 3_000 });
  });

  it("x-slotgate-cache-ttl (or cf-aig-cache-ttl): the entry expires, and expiry is checked on read", async () => {
    const { calls } = numbered();
    const c = caller();
    await c.send({ headers: { "cf-aig-cache-ttl": "1" } });
    await stored(c.ns);
    expect((await c.send()).cache).toBe("hit");
    await sleep(1_100);
    expect((await c.send()).cache).toBe("miss");
    expect(calls).toHaveLength(2);
  });

  it("malformed cache headers are 400 invalid_request and nothing goes upstream", async () => {
    const { calls } = numbered();
    const cases: Record<string, string>[] = [
      { "x-slotgate-cache": "sometimes" }, { "x-slotgate-cache-ttl": "-1" }, { "x-slotgate-cache-ttl": "1.5" },
      { "x-slotgate-cache-namespace": "has space" }, { "x-slotgate-cache-sample": "x" }, { "cache-control": "max-age=soon" },
      { "cf-aig-skip-cache": "maybe" }, { "x-slotgate-cache": "only", "cache-control": "no-cache" },
    ];
    for (const headers of cases) {
      const res = await chat({ headers: { "x-slotgate-cache": "on", ...headers } });
      expect(res.status, JSON.stringify(headers)).toBe(400);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request");
    }
    expect(calls).toHaveLength(0);
  });
});

describe("cache: what is never stored", () => {
  it("a 4xx and a 5xx are never stored", async () => {
    let status = 400;
    const { calls } = mockUpstream(() => json({ error: { message: "no", type: "invalid_request_error" } }, status));
    const c = caller({ "x-slotgate-max-attempts": "1" });
    expect((await c.send()).res.status).toBe(400);
    status = 503;
    expect((await c.send()).res.status).toBe(503);
    await sleep(100);
    status = 200;
    expect((await c.send()).cache).toBe("miss");
    expect(calls).toHaveLength(3);
  });

  it("a stream that breaks, or ends without its final event, is never stored", async () => {
    let shape = 0;
    const { calls } = mockUpstream(() => (shape++ === 0 ? sse(SSE.slice(0, 2), true) : shape === 2 ? sse(SSE.slice(0, 3)) : sse(SSE)));
    const c = caller();
    const broken = await chat({ key: c.key, body: STREAM_BODY, headers: { "x-slotgate-cache": "on", "x-slotgate-cache-namespace": c.ns } });
    await expect(broken.text()).rejects.toThrow();
    const cut = await c.send({ body: STREAM_BODY });
    expect(cut.text).toBe(SSE.slice(0, 3).join(""));
    await sleep(100);
    expect((await nsStats(c.ns))?.entries ?? 0).toBe(0);
    const whole = await c.send({ body: STREAM_BODY });
    expect(whole.cache).toBe("miss");
    await stored(c.ns);
    expect(calls).toHaveLength(3);
  });

  it("an answer over CACHE_MAX_BYTES passes through unstored", async () => {
    const big = { ...CHAT, pad: "x".repeat(3 * 1024 * 1024) };
    const { calls } = mockUpstream(() => json(big));
    const c = caller();
    const a = await c.send();
    expect(a.text.length).toBeGreaterThan(3 * 1024 * 1024);
    await sleep(100);
    expect((await c.send()).cache).toBe("miss");
    expect(calls).toHaveLength(2);
  });
});

