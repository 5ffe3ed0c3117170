// Service tiers through the Worker, the provider mocked (issue 35): the tier written only where the
// row takes it, the caller's body winning, TIERS per lane and a virtual key's tier, a flex refusal
// waited through and then standard with the key's limit and gate untouched, a shed tier probed,
// Groq's flex in a limit key of its own, answers priced by the tier that served (`by=tier`), and a
// budget reserved at the tier asked for and settled at the tier served.
import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import { callWith } from "../support/app";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { admin, call, mint } from "../support/vk";

afterEach(() => vi.restoreAllMocks());

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const chatBody = (model: string, extra: object = {}) => ({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 16, ...extra });
const sentTier = (body: string) => (JSON.parse(body) as { service_tier?: string }).service_tier;
const limiterOf = (key: string) => env.LIMITER.get(env.LIMITER.idFromName(key));
const stateOf = async (key: string) => (await limiterOf(key).state()) as unknown as {
  concurrency: { limit: number; inFlight: number }; history: { reason: string }[]; cooldownUntil: string | null; metrics: { totalRequests: number; retriedRequests: number };
};
/** OpenAI flex's refusal: "429 Resource Unavailable" (its body's code is not documented; the stand-in's wording). */
const UNAVAILABLE = { error: { message: "Resource Unavailable. Please retry later, or use the default service tier.", type: "server_error", param: null, code: "resource_unavailable" } };
const refused = () => json(UNAVAILABLE, 429, { "retry-after-ms": "5" });
const USAGE = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
const answered = (tier: string) => json({ ...CHAT, model: "gpt-5-mini", service_tier: tier, usage: USAGE });

async function flushed(key: string, n: number): Promise<void> {
  const stub = limiterOf(key);
  await vi.waitFor(() => runInDurableObject(stub, (obj: Limiter) => expect(obj.ledger.pending).toBe(n)));
  await runInDurableObject(stub, (obj: Limiter) => obj.ledger.flush(obj.now()));
}

describe("the tier a request goes at", () => {
  it("is written only where the row takes it: a flex model's chat at flex, another model's at standard, embeddings and Mistral as they came", async () => {
    const { calls } = mockUpstream((req) => (req.url.endsWith("/embeddings") ? json({ data: [] }) : answered("default")));
    const h = { authorization: "Bearer sk-tier-write-1", "x-slotgate-tier": "flex" };
    const flex = await post("/openai/v1/chat/completions", h, chatBody("gpt-5-mini"));
    expect(sentTier(calls.at(-1)!.body)).toBe("flex");
    expect(flex.headers.get("x-slotgate-tier-refusals")).toBe("0");
    const other = await post("/openai/v1/chat/completions", h, chatBody("gpt-4o-mini"));
    expect(sentTier(calls.at(-1)!.body)).toBe("default");
    expect(other.headers.get("x-slotgate-tier")).toBe("standard");
    const embed = { model: "text-embedding-3-small", input: "hi" };
    await post("/openai/v1/embeddings", h, embed);
    expect(JSON.parse(calls.at(-1)!.body)).toEqual(embed);
    const mistral = chatBody("mistral-small");
    await post("/mistral/v1/chat/completions", { ...h, authorization: "Bearer mistral-tier-1" }, mistral);
    expect(JSON.parse(calls.at(-1)!.body)).toEqual(mistral);
  });

  it("the caller's own body wins over its header; a bad header is refused and nothing is sent", async () => {
    const { calls } = mockUpstream(() => answered("priority"));
    const body = chatBody("gpt-5-mini", { service_tier: "priority" });
    const res = await post("/openai/v1/chat/completions", { authorization: "Bearer sk-tier-body-1", "x-slotgate-tier": "flex" }, body);
    expect(calls[0]!.body).toBe(JSON.stringify(body));
    expect(res.headers.get("x-slotgate-tier")).toBe("priority");
    const bad = await post("/openai/v1/chat/completions", { authorization: "Bearer sk-tier-body-1", "x-slotgate-tier": "cheapest" }, body);
    expect(bad.status).toBe(400);
    expect(bad.headers.get("x-slotgate-error")).toBe("invalid_request");
    expect(calls).toHaveLength(1);
  });

  it("TIERS sends a lane at its tier; a virtual key minted with a tier sends its requests at it; a bad TIERS is a config error", async () => {
    const { calls } = mockUpstream(() => answered("flex"));
    const init = (lane: string) => ({
      method: "POST", headers: { authorization: "Bearer sk-tier-lane-1", "content-type": "application/json", "x-slotgate-priority": lane }, body: JSON.stringify(chatBody("gpt-5-mini")),
    });
    await callWith("/openai/v1/chat/completions", init("low"), { TIERS: '{"low":"flex"}' });
    expect(sentTier(calls.at(-1)!.body)).toBe("flex");
    await callWith("/openai/v1/chat/completions", init("normal"), { TIERS: '{"low":"flex"}' });
    expect(sentTier(calls.at(-1)!.body)).toBeUndefined();
    const bad = await callWith("/openai/v1/chat/completions", init("low"), { TIERS: '{"low":"half-price"}' });
    expect(bad.status).toBe(500);
    expect(await bad.text()).toMatch(/TIERS must be a JSON object of lane/);

    const vk = await mint("duo", { tier: "flex" });
    expect(vk).toMatchObject({ tier: "flex" });
    await call(vk.key, { model: "gpt-5-mini" });
    expect(sentTier(calls.at(-1)!.body)).toBe("flex");
    const listed = (await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; tier: string | null }[] };
    expect(listed.virtualKeys.find((k) => k.name === vk.name)!.tier).toBe("flex");
    expect((await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name: "vk-bad-tier", pool: "duo", tier: "cheap" }) })).status).toBe(400);
  });
});

describe("a flex refusal is the tier's, not the key's", () => {
  it("is waited through at flex, then the request goes at standard; the key's limit, history and gate are untouched", async () => {
    const { calls } = mockUpstream((req, n) => (n <= 4 ? refused() : answered("default")));
    const res = await post("/openai/v1/chat/completions", { authorization: "Bearer sk-tier-fall-1", "x-slotgate-tier": "flex" }, chatBody("gpt-5-mini"));
    expect(res.status).toBe(200);
    expect(calls.map((c) => sentTier(c.body))).toEqual(["flex", "flex", "flex", "flex", "default"]);
    expect(res.headers.get("x-slotgate-tier")).toBe("standard");
    expect(res.headers.get("x-slotgate-tier-refusals")).toBe("4");
    const state = await stateOf(res.headers.get("x-slotgate-key")!);
    expect(state.history.some((h) => h.reason === "rate_limit")).toBe(false);
    expect(state.cooldownUntil).toBeNull();
    expect(state.concurrency.limit).toBe(16);
    await vi.waitFor(async () => expect((await stateOf(res.headers.get("x-slotgate-key")!)).concurrency.inFlight).toBe(0));
  });

  it("the same 429 at standard is the key's rate limit; with fallback none a flex refusal comes back once attempts run out", async () => {
    const { calls } = mockUpstream(() => refused());
    const std = await post("/openai/v1/chat/completions", { authorization: "Bearer sk-tier-std-1", "x-slotgate-max-attempts": "1" }, chatBody("gpt-5-mini"));
    expect(std.status).toBe(429);
    expect((await stateOf(std.headers.get("x-slotgate-key")!)).history.some((h) => h.reason === "rate_limit")).toBe(true);
    const none = await post(
      "/openai/v1/chat/completions",
      { authorization: "Bearer sk-tier-none-1", "x-slotgate-tier": "flex", "x-slotgate-tier-fallback": "none", "x-slotgate-max-attempts": "3" },
      chatBody("gpt-5-mini"),
    );
    expect(none.status).toBe(429);
    expect(await none.json()).toEqual(UNAVAILABLE);
    expect(calls.slice(1).map((c) => sentTier(c.body))).toEqual(["flex", "flex", "flex"]);
    expect(none.headers.get("x-slotgate-tier-refusals")).toBe("3");
  });

  it("a tier that sheds everything is probed, not tried by every request: the key's later requests go at standard at once", async () => {
    const { calls } = mockUpstream(() => (sentTier(calls.at(-1)!.body) === "flex" ? refused() : answered("default")));
    for (let i = 0; i < 12; i++) {
      const res = await post("/openai/v1/chat/completions", { authorization: "Bearer sk-tier-shed-1", "x-slotgate-tier": "flex" }, chatBody("gpt-5-mini"));
      expect(res.headers.get("x-slotgate-tier")).toBe("standard");
    }
    const flexCalls = calls.filter((c) => sentTier(c.body) === "flex").length;
    expect(flexCalls).toBeLessThan(12);
    // The last requests (within a second of the probe) sent nothing at flex.
    expect(calls.slice(-4).map((c) => sentTier(c.body))).toEqual(["default", "default", "default", "default"]);
  });

  it("with fallback none a request is never sent at another tier: once the key has the tier shed, it gets the refusal back at once with the probe's wait (issue 39)", async () => {
    const { calls } = mockUpstream(async (req) => (sentTier(await req.text()) === "flex" ? refused() : answered("default")));
    const h = { authorization: "Bearer sk-tier-none-shed-1", "x-slotgate-tier": "flex", "x-slotgate-tier-fallback": "none" };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await post("/openai/v1/chat/completions", h, chatBody("gpt-5-mini"))).status);
    expect(statuses.every((s) => s === 429)).toBe(true);
    // Nothing ever went at standard.
    expect(calls.every((c) => sentTier(c.body) === "flex")).toBe(true);
    const before = calls.length;
    // The key has it shed now: the next one is answered without a call (or is the tier's one probe a second).
    const t0 = Date.now();
    const shed = await post("/openai/v1/chat/completions", h, chatBody("gpt-5-mini"));
    expect(shed.status).toBe(429);
    expect(Date.now() - t0).toBeLessThan(500);
    expect(Number(shed.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const again = await post("/openai/v1/chat/completions", h, chatBody("gpt-5-mini"));
    expect(again.status).toBe(429);
    expect(again.headers.get("x-slotgate-error")).toBe("tier_unavailable");
    expect(calls.length - before).toBeLessThanOrEqual(1);
    expect(calls.every((c) => sentTier(c.body) === "flex")).toBe(true);
    // One that may fall back goes at standard at once.
    const std = await post("/openai/v1/chat/completions", { ...h, "x-slotgate-tier-fallback": "standard" }, chatBody("gpt-5-mini"));
    expect(std.headers.get("x-slotgate-tier")).toBe("standard");
  });

  it("with fallback none, a model or pool without the tier is refused (400) and nothing is sent; one that may fall back goes at standard", async () => {
    const { calls } = mockUpstream(() => answered("default"));
    const none = { authorization: "Bearer sk-tier-none-model-1", "x-slotgate-tier": "flex", "x-slotgate-tier-fallback": "none" };
    const res = await post("/openai/v1/chat/completions", none, chatBody("gpt-4o-mini"));
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/not offered at the flex tier here, and x-slotgate-tier-fallback: none/);
    // A pool whose only member (Azure) sells no flex.
    const vk = await mint("mixed");
    const pooled = await call(vk.key, { model: "gpt-4o-mini", headers: { "x-slotgate-tier": "flex", "x-slotgate-tier-fallback": "none" } });
    expect(pooled.status).toBe(400);
    expect(calls).toHaveLength(0);
    expect((await call(vk.key, { model: "gpt-4o-mini", headers: { "x-slotgate-tier": "flex" } })).status).toBe(200);
  });

  it("Groq's flex counts in a limit key of its own (ten times the on-demand limits); its fallback in the key's own", async () => {
    const capacity = { error: { message: "Flex tier capacity exceeded", type: "internal_server_error", code: "capacity_exceeded" } };
    const { calls } = mockUpstream((_req, n) => (n === 1 ? json(capacity, 498) : json({ ...CHAT, service_tier: "on_demand" })));
    const res = await post("/groq/openai/v1/chat/completions", { authorization: "Bearer gsk-tier-own-1", "x-slotgate-tier": "flex", "x-slotgate-max-attempts": "2" }, chatBody("llama-3.1-8b-instant"));
    expect(res.status).toBe(200);
    expect(calls.map((c) => sentTier(c.body))).toEqual(["flex", "on_demand"]);
    const key = res.headers.get("x-slotgate-key")!;
    const flexKey = key.replace(":llama-3.1-8b-instant:", ":llama-3.1-8b-instant@flex:");
    expect((await stateOf(flexKey)).metrics.totalRequests).toBe(1);
    expect((await stateOf(key)).metrics.retriedRequests).toBe(1);
  });
});

describe("priced by the tier that served", () => {
  it("the ledger keeps each answer at the tier its provider reports, not the one asked for (GET /admin/usage?by=tier)", async () => {
    const since = Date.now() - 60_000;
    mockUpstream((req) => (req.headers.get("x-served") === "standard" ? answered("default") : answered("flex")));
    const h = { authorization: "Bearer sk-tier-price-1", "x-slotgate-tier": "flex" };
    const key = (await post("/openai/v1/chat/completions", h, chatBody("gpt-5-mini"))).headers.get("x-slotgate-key")!;
    await post("/openai/v1/chat/completions", h, chatBody("gpt-5-mini"));
    await post("/openai/v1/chat/completions", { ...h, "x-served": "standard" }, chatBody("gpt-5-mini"));
    await flushed(key, 3);
    const rows = ((await (await admin(`/admin/usage?since=${since}&by=tier`)).json()) as { rows: { tier: string | null; requests: number; costUsd: number }[] }).rows;
    const of = (tier: string) => rows.filter((r) => r.tier === tier).reduce((a, r) => ({ requests: a.requests + r.requests, costUsd: a.costUsd + r.costUsd }), { requests: 0, costUsd: 0 });
    // gpt-5-mini: 0.25 in, 2 out per million; flex at OpenAI's Batch API price, half.
    const standard = (1000 * 0.25 + 100 * 2) / 1e6;
    expect(of("flex").requests).toBe(2);
    expect(of("flex").costUsd).toBeCloseTo(standard, 12);
    expect(of("standard").requests).toBe(1);
    expect(of("standard").costUsd).toBeCloseTo(standard, 12);
  });

  it("a budget reserves at the dearest tier a request may be served at (issue 39): flex that may fall back, at standard; flex that may not, at flex", async () => {
    const { calls } = mockUpstream(async (req) => answered(sentTier(await req.text()) ?? "default"));
    // max_tokens 1,000 of gpt-5-mini: about $0.002 at standard, $0.001 at flex.
    const big = chatBody("gpt-5-mini", { max_tokens: 1000 });
    const vk = await mint("duo", { budget: 0.0015 });
    const std = await call(vk.key, { body: big });
    expect(std.status).toBe(402);
    // At flex with fallback to standard it may be served (and charged) at standard: reserved there, and refused.
    const fallback = await call(vk.key, { body: big, headers: { "x-slotgate-tier": "flex" } });
    expect(fallback.status).toBe(402);
    expect(await fallback.text()).toMatch(/with max_completion_tokens at most \d/);
    expect(calls).toHaveLength(0);
    // With fallback none it is never served at another tier: reserved (and charged) at flex.
    const flex = await call(vk.key, { body: big, headers: { "x-slotgate-tier": "flex", "x-slotgate-tier-fallback": "none" } });
    expect(flex.status).toBe(200);
    expect(flex.headers.get("x-slotgate-tier")).toBe("flex");
    expect(sentTier(calls[0]!.body)).toBe("flex");
    const spend = async () => ((await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; spend: { usd: number; reservedUsd: number } }[] }).virtualKeys.find((k) => k.name === vk.name)!.spend;
    await vi.waitFor(async () => expect((await spend()).reservedUsd).toBe(0));
    expect((await spend()).usd).toBeCloseTo((1000 * 0.25 + 100 * 2) / 2e6, 12);

    const claude = await mint("claude", { budget: 1 });
    const priority = await call(claude.key, {
      path: "/anthropic/v1/messages", headers: { "x-slotgate-tier": "priority", "anthropic-version": "2023-06-01" }, body: { model: "claude-haiku-4-5", max_tokens: 16, messages: [] },
    });
    expect(priority.status).toBe(403);
    expect(await priority.text()).toMatch(/has no price/);
    expect(calls).toHaveLength(1);
  });

  it("Anthropic's default may be Priority Tier (unpriced): a budgeted key's request that names no tier is sent at standard_only; auto is refused (issue 39)", async () => {
    const { calls } = mockUpstream(() => json({ id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-haiku-4-5", usage: { input_tokens: 5, output_tokens: 5, service_tier: "standard" } }));
    const body = { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
    const headers = (key: string) => ({ "x-api-key": key, "anthropic-version": "2023-06-01" });
    const budgeted = await mint("claude", { budget: 1 });
    expect((await post("/anthropic/v1/messages", headers(budgeted.key), body)).status).toBe(200);
    expect(JSON.parse(calls.at(-1)!.body).service_tier).toBe("standard_only");
    const auto = await post("/anthropic/v1/messages", headers(budgeted.key), { ...body, service_tier: "auto" });
    expect(auto.status).toBe(403);
    expect(((await auto.json()) as { error: { message: string } }).error.message).toMatch(/service tier "priority" has no price/);
    // A key without a budget is sent as it came: the account's default serves.
    const free = await mint("claude");
    expect((await post("/anthropic/v1/messages", headers(free.key), body)).status).toBe(200);
    expect(JSON.parse(calls.at(-1)!.body).service_tier).toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it("Gemini's camelCase serviceTier is the caller's own tier: reserved at it, sent as written (issue 39)", async () => {
    const { calls } = mockUpstream(() => json({ candidates: [], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 1_000 } }, 200, { "x-gemini-service-tier": "priority" }));
    // gemini-2.5-flash, 1,000 output tokens: $0.0025 at standard, $0.005 at priority (2x).
    const vk = await mint("gem", { budget: 0.004 });
    const body = { contents: [{ parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 1_000 }, serviceTier: "priority" };
    const res = await post("/gemini/v1beta/models/gemini-2.5-flash:generateContent", { "x-goog-api-key": vk.key }, body);
    expect(res.status).toBe(402);
    expect(calls).toHaveLength(0);
    const fits = await mint("gem", { budget: 0.01 });
    const ok = await post("/gemini/v1beta/models/gemini-2.5-flash:generateContent", { "x-goog-api-key": fits.key }, body);
    expect(ok.status).toBe(200);
    expect(JSON.parse(calls[0]!.body)).toEqual(body);
    expect(ok.headers.get("x-slotgate-tier")).toBe("priority");
  });
});
