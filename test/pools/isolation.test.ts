// What one virtual key's holder can learn of, or take from, another's: cached answers are each
// key's own unless the operator shares them; its cap holds across every member and model; the
// members' identity and keys never reach it; a budgeted key cannot spend on an unpriced model.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { stored, uid } from "../support/cache";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { call, errorOf, KEY_A, KEY_B, memberOf, mint } from "../support/vk";
import { env, exports } from "cloudflare:workers";

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the cache between virtual keys", () => {
  /** A numbered answer per upstream call, so a replay is told from a fresh one. */
  const numbered = () => mockUpstream((_, n) => json({ ...CHAT, id: `chatcmpl-${n}` }));
  const cached = (key: string, ns: string, mode = "on") => call(key, { headers: { "x-slotgate-cache": mode, "x-slotgate-cache-namespace": ns } });

  it("by default each key reads only its own entries: another key of the pool gets a miss, even with `only`", async () => {
    numbered();
    const ns = `iso-${uid()}`;
    const a = await mint("duo");
    const b = await mint("duo");
    expect((await cached(a.key, ns)).headers.get("x-slotgate-cache")).toBe("miss");
    await stored(ns);
    expect((await cached(a.key, ns, "only")).headers.get("x-slotgate-cache")).toBe("hit");
    const oracle = await cached(b.key, ns, "only");
    expect(oracle.status).toBe(504);
    expect(oracle.headers.get("x-slotgate-cache")).toBe("miss");
  });

  it("a pool that shares its cache (sharedCache), or keys that opt in (cache: pool), read each other's", async () => {
    numbered();
    const ns = `share-${uid()}`;
    const a = await mint("shared");
    const b = await mint("shared");
    const own = await mint("shared", { cache: "key" });
    const first = await cached(a.key, ns);
    await stored(ns);
    const replay = await cached(b.key, ns, "only");
    expect(replay.headers.get("x-slotgate-cache")).toBe("hit");
    expect(await replay.text()).toBe(await first.text());
    expect((await cached(own.key, ns, "only")).status).toBe(504);

    const ns2 = `optin-${uid()}`;
    const c = await mint("duo", { cache: "pool" });
    const d = await mint("duo", { cache: "pool" });
    const e = await mint("duo");
    await cached(c.key, ns2);
    await stored(ns2);
    expect((await cached(d.key, ns2, "only")).headers.get("x-slotgate-cache")).toBe("hit");
    expect((await cached(e.key, ns2, "only")).status).toBe(504);
  });
});

describe("a virtual key's cap across its whole pool", () => {
  it("maxConcurrency 2 holds over both members and four models: never more than 2 at the provider, every request answered", async () => {
    let now = 0;
    let peak = 0;
    mockUpstream(async () => {
      now++;
      peak = Math.max(peak, now);
      await sleep(40);
      now--;
      return json(CHAT);
    });
    const vk = await mint("duo", { maxConcurrency: 2 });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call(vk.key, { model: `gpt-cap-${i % 4}` })));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(peak).toBe(2);
    // The wait at the cap is queueing, as the caller is told.
    expect(Math.max(...answers.map((r) => Number(r.headers.get("x-slotgate-queue-ms"))))).toBeGreaterThanOrEqual(30);
  });

  it("a streamed answer holds its slot until its body has ended", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { calls } = mockUpstream(async (_, n) => {
      if (n > 1) return json(CHAT);
      const enc = new TextEncoder();
      return new Response(new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode('data: {"choices":[]}\n\n'));
          await held;
          c.enqueue(enc.encode("data: [DONE]\n\n"));
          c.close();
        },
      }), { headers: { "content-type": "text/event-stream" } });
    });
    const vk = await mint("duo", { maxConcurrency: 1 });
    const stream = await call(vk.key, { body: { model: "gpt-cap-stream", stream: true, messages: [] } });
    expect(stream.status).toBe(200);
    const second = call(vk.key, { model: "gpt-cap-other" });
    await sleep(150);
    expect(calls).toHaveLength(1);
    release();
    await stream.text();
    expect((await second).status).toBe(200);
    expect(calls).toHaveLength(2);
  });

  it("at the cap past its deadline: 429 queue_timeout with retry-after, nothing sent", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { calls } = mockUpstream(async () => {
      await held;
      return json(CHAT);
    });
    const vk = await mint("duo", { maxConcurrency: 1 });
    const first = call(vk.key);
    await sleep(50);
    const late = await call(vk.key, { headers: { "x-slotgate-deadline-ms": "100" } });
    expect(late.status).toBe(429);
    expect(late.headers.get("x-slotgate-error")).toBe("queue_timeout");
    expect(late.headers.get("retry-after")).toMatch(/^\d+$/);
    expect((await errorOf(late)).message).toMatch(/maxConcurrency/);
    release();
    expect((await first).status).toBe(200);
    expect(calls).toHaveLength(1);
  });
});

describe("what a holder sees of the members", () => {
  it("no member identity or session headers, on a success or an error", async () => {
    const identity = { "openai-organization": "org-member-secret", "openai-project": "proj_member", "anthropic-organization-id": "org-ant", "set-cookie": "__cf_bm=abc; path=/" };
    mockUpstream((_, n) => (n === 1 ? json(CHAT, 200, identity) : json({ error: { message: "bad", type: "invalid_request_error", param: null, code: null } }, 400, identity)));
    const vk = await mint("duo");
    for (const res of [await call(vk.key), await call(vk.key)]) {
      for (const h of Object.keys(identity)) expect(res.headers.get(h), h).toBeNull();
      await res.text();
    }
  });

  it("a member that cannot be reached: the 502 says why, but not its host (an Azure member's host names the operator's resource)", async () => {
    mockUpstream(() => Promise.reject(new Error("Network connection lost.")));
    const vk = await mint("mixed");
    const res = await call(vk.key, { headers: { "x-slotgate-max-attempts": "1" } });
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(JSON.parse(text).error.message).toMatch(/^the pool's member could not be reached \(1 attempt\): the connection was refused or lost/);
    expect(text).not.toContain("myres");
  });

  it("a member's whole key echoed in an error body is cut out", async () => {
    mockUpstream((req) => json({ error: { message: `key ${memberOf(req.headers) === "a" ? KEY_A : KEY_B} may not use this model`, type: "invalid_request_error", param: null, code: null } }, 400));
    const vk = await mint("duo");
    const text = await (await call(vk.key)).text();
    expect(text).toContain("[redacted]");
    expect(text).not.toContain(KEY_A);
    expect(text).not.toContain(KEY_B);
  });

  it("nothing in an answer tells the members apart (issue 33): their organization in an error's text, their quota headers, Azure's, the key", async () => {
    // Each member answers as its own account would: its org and project in a 429's message, its tier in its limits.
    const tier = { a: "500", b: "10000" } as const;
    const headersOf = (m: "a" | "b") => ({
      "x-ratelimit-limit-requests": tier[m], "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20ms",
      "anthropic-ratelimit-requests-limit": tier[m], "x-ms-region": m === "a" ? "East US" : "Sweden Central", "x-ms-deployment-name": `dep-${m}`,
      "azureml-model-session": `s-${m}`, "apim-request-id": `apim-${m}`, "x-request-id": "req-1",
    });
    const answers: ("ok" | "429")[] = ["ok", "ok", "429", "429"];
    mockUpstream((req, n) => {
      const m = memberOf(req.headers) as "a" | "b";
      if (answers[(n - 1) % 4] === "ok") return json(CHAT, 200, headersOf(m));
      // OpenAI names its organization org-... and project proj_...; Anthropic's organization is a UUID.
      const org = m === "a" ? "org-AbC123member" : "org-XyZ789member";
      const uuid = `2b7e4c1f-1111-4000-8000-00000000000${m}`;
      const message = `Rate limit reached for gpt-4o-mini in organization ${org} on requests per min (RPM): Limit ${tier[m]}, Used ${tier[m]}, Requested 1. Project proj_${m}Q2w3E4r5. (This request would exceed the rate limit for your organization (${uuid}).)`;
      return json({ error: { message, type: "requests", param: null, code: "rate_limit_exceeded" } }, 429, { ...headersOf(m), "retry-after": "1" });
    });
    const vk = await mint("duo");
    const seen: { key: string | null; text: string; headers: string[] }[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call(vk.key, { headers: { "x-slotgate-max-attempts": "1" } });
      const text = await res.text();
      if (res.status === 429) {
        expect(text).toContain("[redacted]");
        expect(res.headers.get("retry-after")).toBe("1");
      }
      for (const leak of ["org-AbC123member", "org-XyZ789member", "2b7e4c1f-1111-4000-8000-00000000000", "proj_a", "proj_b"]) expect(text).not.toContain(leak);
      const names = [...res.headers.keys()];
      for (const h of names) expect(h, h).not.toMatch(/ratelimit|^x-ms-|^azureml-|^apim-|^x-slotgate-limit$|^x-slotgate-rate$/);
      seen.push({ key: res.headers.get("x-slotgate-key"), text, headers: names.sort() });
    }
    // The same key whichever member answered (the virtual key's own), and no member's hash.
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    const pools = (await (await exports.default.fetch("http://gateway/admin/pools", { headers: { authorization: "Bearer test-admin-token" } })).json()) as { pools: { name: string; members: { keys: string[] }[] }[] };
    const memberHashes = pools.pools.find((p) => p.name === "duo")!.members.flatMap((m) => m.keys.map((k) => k.split(":").pop()!));
    expect(memberHashes.length).toBeGreaterThan(0);
    for (const h of memberHashes) expect(seen[0]!.key).not.toContain(h);
  });

  it("a Gemini pool: the virtual key in ?key= never goes upstream, the member's key goes in its header", async () => {
    const { calls } = mockUpstream(() => json({ candidates: [], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } }));
    const vk = await mint("gem");
    const res = await exports.default.fetch(`http://gateway/gemini/v1beta/models/gemini-2.0-flash:generateContent?key=${vk.key}&alt=json`, {
      method: "POST",
      // Google's front ends honour a method override: the scope was checked on POST, so none goes upstream.
      headers: { "content-type": "application/json", "x-http-method-override": "DELETE" },
      body: JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }] }),
    });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(1);
    const url = new URL(calls[0]!.url);
    expect(url.searchParams.get("key")).toBeNull();
    expect(url.searchParams.get("alt")).toBe("json");
    expect(calls[0]!.url).not.toContain(vk.key);
    expect(calls[0]!.headers.get("x-goog-api-key")).toBe(env.POOL_KEY_GEM);
    expect(calls[0]!.headers.get("x-http-method-override")).toBeNull();
  });
});

describe("a budgeted key and a model with no price", () => {
  it("is refused (403 forbidden) and nothing is sent: it would cost the budget nothing", async () => {
    const { calls } = mockUpstream(() => json({ ...CHAT, usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } }));
    const vk = await mint("duo", { budget: 1 });
    const res = await call(vk.key, { model: "my-unpriced-finetune" });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).message).toMatch(/has no price/);
    expect(calls).toHaveLength(0);
    // A priced model still goes.
    expect((await call(vk.key)).status).toBe(200);
  });
});
