// Each provider read in its own dialect, through the Worker with the provider mocked (issue 32):
// the key's scope, streamed usage asked only where accepted, capacity retried, spent credits back
// at once, a pool member without balance out, a held answer passed through as it comes.
import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import { forgetViews } from "../../src/pools/route";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { ADMIN, call, mint } from "../support/vk";

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const chatBody = (model: string, extra: object = {}) => ({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 16, ...extra });
const limiterOf = (key: string) => env.LIMITER.get(env.LIMITER.idFromName(key));
/** The key's limiter state, as GET /admin/keys/:key shows it (asked of the object itself: the directory learns of a key later). */
const stateOf = async (key: string) => (await limiterOf(key).state()) as unknown as {
  concurrency: { limit: number; inFlight: number }; history: { reason: string }[]; cooldownUntil: string | null;
};

describe("Azure: limits per resource and deployment", () => {
  it("keys by resource and deployment: two resources of one credential are two limiters; the v1 surface's deployment is the body's model", async () => {
    mockUpstream(() => json(CHAT));
    const h = { "api-key": "azure-key-scope-1" };
    const path = (res: string) => `/azure/${res}/openai/deployments/mini-dep/chat/completions?api-version=2024-10-21`;
    const a = (await post(path("res-one"), h, chatBody("ignored"))).headers.get("x-slotgate-key")!;
    const b = (await post(path("res-two"), h, chatBody("ignored"))).headers.get("x-slotgate-key")!;
    const v1 = (await post("/azure/res-one/openai/v1/chat/completions", h, chatBody("big-dep"))).headers.get("x-slotgate-key")!;
    expect(a).toMatch(/^azure:res-one\/mini-dep:[0-9a-f]{16}$/);
    expect(b).toMatch(/^azure:res-two\/mini-dep:[0-9a-f]{16}$/);
    expect(v1).toMatch(/^azure:res-one\/big-dep:[0-9a-f]{16}$/);
  });

  it("a stream on an api-version older than 2024-09-01-preview is sent as the caller wrote it; a newer one is asked for usage", async () => {
    const sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n";
    const { calls } = mockUpstream(() => new Response(sse, { headers: { "content-type": "text/event-stream" } }));
    const h = { "api-key": "azure-key-stream-1" };
    const at = (v: string) => `/azure/res-one/openai/deployments/mini-dep/chat/completions?api-version=${v}`;
    for (const v of ["2024-02-01", "2024-06-01", "2024-08-01-preview"]) {
      await (await post(at(v), h, chatBody("x", { stream: true }))).text();
      expect(JSON.parse(calls.at(-1)!.body).stream_options, v).toBeUndefined();
    }
    for (const v of ["2024-09-01-preview", "2024-10-21", "2025-04-01-preview"]) {
      await (await post(at(v), h, chatBody("x", { stream: true }))).text();
      expect(JSON.parse(calls.at(-1)!.body).stream_options, v).toEqual({ include_usage: true });
    }
  });

});

describe("Gemini's OpenAI-compatible route", () => {
  it("is keyed by the body's model, priced, and open to a virtual key of a Gemini pool", async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
    mockUpstream(() => json({ ...CHAT, model: "gemini-2.0-flash", usage }));
    const since = Date.now() - 60_000;
    const res = await post("/gemini/v1beta/openai/chat/completions", { authorization: "Bearer AIza-direct-1" }, chatBody("gemini-2.0-flash"));
    expect(res.status).toBe(200);
    const key = res.headers.get("x-slotgate-key")!;
    expect(key).toMatch(/^gemini:gemini-2\.0-flash:[0-9a-f]{16}$/);
    await res.text();
    const stub = limiterOf(key);
    await vi.waitFor(() => runInDurableObject(stub, (obj: Limiter) => expect(obj.ledger.pending).toBe(1)));
    await runInDurableObject(stub, (obj: Limiter) => obj.ledger.flush(obj.now()));
    const totals = ((await (await exports.default.fetch(`http://gateway/admin/usage?since=${since}&by=model`, { headers: ADMIN })).json()) as { rows: { model: string; costUsd: number; unpricedRequests: number }[] }).rows
      .find((r) => r.model === "gemini-2.0-flash")!;
    expect(totals.unpricedRequests).toBe(0);
    expect(totals.costUsd).toBeCloseTo((1000 * 0.1 + 100 * 0.4) / 1e6, 9);

    const vk = await mint("gem");
    const viaKey = await call(vk.key, { path: "/gemini/v1beta/openai/chat/completions", model: "gemini-2.0-flash" });
    expect(viaKey.status).toBe(200);
  });
});

describe("refusals by meaning", () => {
  it("Groq's 498 flex capacity is retried, and neither cuts the key's limit nor shuts its gate", async () => {
    const capacity = { error: { message: "Flex tier capacity exceeded. Please try again later.", type: "capacity_exceeded", code: "capacity_exceeded" } };
    const { calls } = mockUpstream((_, n) => (n === 1 ? json(capacity, 498) : json(CHAT)));
    const res = await post("/groq/openai/v1/chat/completions", { authorization: "Bearer gsk-flex-1" }, chatBody("llama-3.1-8b-instant", { service_tier: "flex" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-slotgate-attempts")).toBe("2");
    expect(calls).toHaveLength(2);
    const state = await stateOf(res.headers.get("x-slotgate-key")!);
    expect(state.history.some((h) => h.reason === "rate_limit")).toBe(false);
    expect(state.cooldownUntil).toBeNull();
  });

  it("xAI's spent credits (a 429 whose error is a sentence) come back after one attempt, the key's limit untouched", async () => {
    const spent = { code: "Some resource has been exhausted", error: "Your team 16f2151a-40f4-4a80-8ad0-cae00c27e8dd has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit." };
    const { calls } = mockUpstream(() => json(spent, 429));
    const started = Date.now();
    const res = await post("/xai/v1/chat/completions", { authorization: "Bearer xai-spent-1", "x-slotgate-max-attempts": "3" }, chatBody("grok-3-mini"));
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual(spent);
    expect(calls).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await stateOf(res.headers.get("x-slotgate-key")!)).history.some((h) => h.reason === "rate_limit")).toBe(false);
  });

  it("a pool member without balance (DeepSeek's 402) is out after its first refusal; the other (OpenRouter) answers", async () => {
    const broke = { error: { message: "Insufficient Balance", type: "unknown_error", param: null, code: "invalid_request_error" } };
    const { calls } = mockUpstream((req) => (req.url.startsWith("https://api.deepseek.com/") ? json(broke, 402) : json(CHAT)));
    const vk = await mint("cheap");
    const toDs = () => calls.filter((c) => c.url.startsWith("https://api.deepseek.com/")).length;
    // The router draws its members at random: ask until it has drawn DeepSeek (its 402 is retried at OpenRouter), then it stays out.
    for (let i = 0; i < 40 && toDs() === 0; i++) expect((await call(vk.key, { path: "/deepseek/chat/completions", model: "deepseek-chat" })).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await call(vk.key, { path: "/deepseek/chat/completions", model: "deepseek-chat" })).status).toBe(200);
    expect(toDs()).toBe(1);
    const pools = (await (await exports.default.fetch("http://gateway/admin/pools", { headers: ADMIN })).json()) as { pools: { name: string; members: { name: string; state: string; reason: string | null }[] }[] };
    const ds = pools.pools.find((p) => p.name === "cheap")!.members.find((m) => m.name === "ds")!;
    expect(ds).toMatchObject({ state: "out", reason: "payment_required" });
  });
});

describe("an answer held open with blank lines (DeepSeek under load)", () => {
  it("reaches the caller as it comes: its headers before its body has ended", async () => {
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    const answer = JSON.stringify({ ...CHAT, usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } });
    mockUpstream(() => {
      const enc = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(enc.encode("\n"));
          await done;
          c.enqueue(enc.encode(`\n${answer}`));
          c.close();
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    });
    const pending = post("/deepseek/chat/completions", { authorization: "Bearer sk-ds-held-1" }, chatBody("deepseek-chat"));
    const first = await Promise.race([pending, sleep(2000).then(() => "still waiting" as const)]);
    release();
    expect(first).not.toBe("still waiting");
    const res = first as Response;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`\n\n${answer}`);
    // Its usage was read at its end, and its slot went back.
    const stub = limiterOf(res.headers.get("x-slotgate-key")!);
    await vi.waitFor(() => runInDurableObject(stub, (obj: Limiter) => expect(obj.ledger.pending).toBe(1)));
    await vi.waitFor(async () => expect((await stateOf(res.headers.get("x-slotgate-key")!)).concurrency.inFlight).toBe(0));
  });
});

describe("Fireworks: generated tokens in a window of their own", () => {
  // Its headers as docs.fireworks.ai `serverless/rate-limits` names them, per second; the generated
  // window spent by the first answer (as a provider counting each request's max_tokens would say).
  const headers = (generated: number) => ({
    "x-ratelimit-limit-tokens-prompt": "60000", "x-ratelimit-remaining-tokens-prompt": "59000",
    "x-ratelimit-limit-tokens-generated": "320", "x-ratelimit-remaining-tokens-generated": String(generated),
  });
  const path = (p: string) => `/${p}/inference/v1/chat/completions`;

  it("a request waits for the output its max_tokens allows to refill, though the prompt's window has plenty; the admin view lists the window", async () => {
    // The first request (max_tokens 300) leaves 20 of the 320.
    const { calls } = mockUpstream(() => json(CHAT, 200, headers(20)));
    const h = { authorization: "Bearer fw-key-generated-1" };
    const model = "accounts/fireworks/models/llama-v3p1-8b-instruct";
    const first = await post(path("fireworks"), h, chatBody(model, { max_tokens: 300 }));
    expect(first.status).toBe(200);
    // 100 more: 80 short, at 320 a second 250 ms before the provider would take it.
    const second = await post(path("fireworks"), h, chatBody(model, { max_tokens: 100 }));
    expect(second.status).toBe(200);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(200);
    const state = (await limiterOf(first.headers.get("x-slotgate-key")!).state()) as unknown as { quotas: { output?: { limit: number } } };
    expect(state.quotas.output).toMatchObject({ limit: 320 });
  });

  it("a provider whose row reads no such window is not held by those headers", async () => {
    const { calls } = mockUpstream(() => json(CHAT, 200, headers(20)));
    const h = { authorization: "Bearer sk-generated-openai-1" };
    await post("/openai/v1/chat/completions", h, chatBody("gpt-4o-mini", { max_tokens: 300 }));
    const res = await post("/openai/v1/chat/completions", h, chatBody("gpt-4o-mini", { max_tokens: 100 }));
    expect(calls[1]!.at - calls[0]!.at).toBeLessThan(250);
    const state = (await limiterOf(res.headers.get("x-slotgate-key")!).state()) as unknown as { quotas: object };
    expect(state.quotas).not.toHaveProperty("output");
  });
});
