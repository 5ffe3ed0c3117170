import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { CHAT, json, mockUpstream } from "../support/upstream";

const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
const admin = (path: string, init: RequestInit = {}) => exports.default.fetch(`http://gateway${path}`, { ...init, headers: ADMIN });

let n = 0;
async function mint(extra: Record<string, unknown>, pool = "duo") {
  const name = `budget-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name, pool, ...extra }) });
  expect(res.status).toBe(201);
  return (await res.json()) as { name: string; key: string; budget: number | null; budgetPeriod: string | null };
}

const call = (key: string, body: Record<string, unknown> = {}) =>
  exports.default.fetch("http://gateway/openai/v1/chat/completions", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 16, ...body }),
  });

async function spendOf(name: string): Promise<{ usd: number; reservedUsd: number; since: string } | null> {
  const list = (await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; spend: { usd: number; reservedUsd: number; since: string } | null }[] };
  return list.virtualKeys.find((k) => k.name === name)!.spend;
}

/** gpt-4o-mini: 0.15 in, 0.6 out per million. 1000 in + 1000 out = $0.00075. */
const USAGE = { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 };
const COST = (1000 * 0.15 + 1000 * 0.6) / 1e6;

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

describe("virtual key budgets", () => {
  it("POST takes budget and budgetPeriod (default total); bad ones are refused with the reason", async () => {
    expect(await mint({ budget: 2.5, budgetPeriod: "day" })).toMatchObject({ budget: 2.5, budgetPeriod: "day" });
    expect(await mint({ budget: 1 })).toMatchObject({ budget: 1, budgetPeriod: "total" });
    expect(await mint({})).toMatchObject({ budget: null, budgetPeriod: null });
    for (const [extra, why] of [[{ budget: 0 }, /budget: USD/], [{ budget: "5" }, /budget: USD/], [{ budget: 1, budgetPeriod: "week" }, /budgetPeriod: day, month, total/], [{ budgetPeriod: "day" }, /needs a budget/]] as const) {
      const res = await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name: `bad-${++n}`, pool: "duo", ...extra }) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(why);
    }
  });

  it("over its budget, a key gets 402 budget_exceeded with spend and limit, and nothing more is sent", async () => {
    const { calls } = mockUpstream(() => json({ ...CHAT, usage: USAGE }));
    const vk = await mint({ budget: 0.001, budgetPeriod: "month" });
    expect(await spendOf(vk.name)).toMatchObject({ usd: 0, reservedUsd: 0 });
    expect((await call(vk.key)).status).toBe(200);
    await vi.waitFor(async () => expect((await spendOf(vk.name))!.usd).toBeCloseTo(COST, 12));
    expect((await call(vk.key)).status).toBe(200);
    await vi.waitFor(async () => expect((await spendOf(vk.name))!.usd).toBeCloseTo(2 * COST, 12));
    const sent = calls.length;
    for (let i = 0; i < 3; i++) {
      const res = await call(vk.key);
      expect(res.status).toBe(402);
      expect(res.headers.get("x-slotgate-error")).toBe("budget_exceeded");
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe("budget_exceeded");
      expect(body.error.message).toContain("$0.0015");
      expect(body.error.message).toContain("monthly budget of $0.0010");
    }
    expect(calls.length).toBe(sent);
    const spend = (await spendOf(vk.name))!;
    expect(spend.since).toBe(new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1)).toISOString());
  });

  it("a budget reached mid-stream: the stream in flight finishes, its true cost is settled at its end, then requests are refused", async () => {
    const usageChunk = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 2000, total_tokens: 2010 } })}\n\n`;
    // The stream's second half comes 1.5 s after its first (a timer of the stream's own: a test cannot
    // touch a stream made in the Worker's request).
    mockUpstream(() => {
      const enc = new TextEncoder();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(c) {
          if (sent++ === 0) return c.enqueue(enc.encode(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hi" } }] })}\n\n`));
          await new Promise((r) => setTimeout(r, 1_500));
          c.enqueue(enc.encode(`${usageChunk}data: [DONE]\n\n`));
          c.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    // 2000 output tokens at $0.6/M = $0.0012, over a $0.001 budget: the estimate (16 tokens out) was far lower.
    const vk = await mint({ budget: 0.001, budgetPeriod: "day" });
    const res = await call(vk.key, { stream: true });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    // While it streams, its estimate is held, and there is still room.
    expect((await spendOf(vk.name))!.reservedUsd).toBeGreaterThan(0);
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(text).toContain("[DONE]");
    // The caller did not ask for usage: the chunk the gateway asked for is not shown.
    expect(text).not.toContain("completion_tokens");
    await vi.waitFor(async () => expect((await spendOf(vk.name))!.usd).toBeCloseTo((10 * 0.15 + 2000 * 0.6) / 1e6, 12));
    expect((await spendOf(vk.name))!.reservedUsd).toBe(0);
    expect((await call(vk.key, { stream: true })).status).toBe(402);
  });

  it("an answer that failed releases its reservation: nothing is spent", async () => {
    mockUpstream(() => json({ error: { message: "bad", type: "invalid_request_error" } }, 400));
    const vk = await mint({ budget: 0.001 });
    expect((await call(vk.key)).status).toBe(400);
    await vi.waitFor(async () => expect((await spendOf(vk.name))!.reservedUsd).toBe(0));
    expect((await spendOf(vk.name))!.usd).toBe(0);
  });

  it("a key without a budget shows no spend", async () => {
    mockUpstream(() => json({ ...CHAT, usage: USAGE }));
    const vk = await mint({});
    for (let i = 0; i < 3; i++) expect((await call(vk.key)).status).toBe(200);
    expect(await spendOf(vk.name)).toBeNull();
  });
});

describe("what a budgeted key may not ask for (issue 33): what the gateway cannot price", () => {
  const send = (key: string, path: string, body: BodyInit, headers: Record<string, string> = {}) =>
    exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body });
  const form = (fields: Record<string, string>) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append("image", new File([new Uint8Array(64)], "a.png", { type: "image/png" }));
    return f;
  };
  async function refused(res: Response, why: RegExp) {
    expect(res.status).toBe(403);
    const err = ((await res.json()) as { error: { type: string; message: string } }).error;
    expect(err.type).toBe("forbidden");
    expect(err.message).toMatch(/has a budget/);
    expect(err.message).toMatch(why);
  }

  it("OpenAI: multipart images and audio, a body that is not JSON, tools and fields billed per use, a priority tier, background; nothing sent", async () => {
    const { calls } = mockUpstream(() => json({ ...CHAT, usage: USAGE }));
    const vk = await mint({ budget: 5, scopes: ["inference", "images", "audio"] });
    const multipart = (path: string, f: FormData) => exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { authorization: `Bearer ${vk.key}` }, body: f });
    await refused(await multipart("/openai/v1/images/edits", form({ model: "gpt-image-1", prompt: "a cat" })), /not priced by tokens/);
    await refused(await multipart("/openai/v1/audio/transcriptions", form({ model: "whisper-1" })), /not priced by tokens/);
    await refused(await send(vk.key, "/openai/v1/chat/completions", "model=gpt-4o-mini", { "content-type": "text/plain" }), /not JSON/);
    const chat = (extra: Record<string, unknown>) => send(vk.key, "/openai/v1/chat/completions", JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 16, ...extra }));
    const responses = (extra: Record<string, unknown>) => send(vk.key, "/openai/v1/responses", JSON.stringify({ model: "gpt-4o-mini", input: "hi", max_output_tokens: 16, ...extra }));
    await refused(await chat({ web_search_options: {} }), /web_search_options is billed/);
    await refused(await chat({ service_tier: "scale" }), /service tier "scale" has no price/);
    for (const tool of ["web_search", "web_search_preview", "file_search", "code_interpreter", "image_generation"])
      await refused(await responses({ tools: [{ type: tool, ...(tool === "file_search" ? { vector_store_ids: [] } : {}) }] }), new RegExp(`tool ${tool} is billed per use`));
    await refused(await responses({ background: true }), /background is billed apart/);
    expect(calls).toHaveLength(0);
    // What it can price still goes: the standard and flex tiers, priority (OpenAI's published ratio, issue 35), a function tool, background off.
    expect((await chat({ service_tier: "flex" })).status).toBe(200);
    expect((await chat({ service_tier: "priority" })).status).toBe(200);
    expect((await chat({ service_tier: "default", tools: [{ type: "function", function: { name: "f", parameters: {} } }] })).status).toBe(200);
    expect((await responses({ background: false, store: false })).status).toBe(200);
    expect(calls).toHaveLength(4);
    // A key without a budget is not held to it.
    const free = await mint({});
    expect((await send(free.key, "/openai/v1/responses", JSON.stringify({ model: "gpt-4o-mini", input: "hi", tools: [{ type: "web_search" }] }))).status).toBe(200);
  });

  it("Anthropic: web search and code execution; web fetch, the 1M-context beta (priced by its band, issue 39) and token counts go", async () => {
    const { calls } = mockUpstream(() => json({ id: "msg_1", type: "message", role: "assistant", content: [], model: "claude-haiku-4-5", usage: { input_tokens: 5, output_tokens: 5 } }));
    // Web fetch reads pages of a size only the provider sees: reserved at the model's whole context, its 1M tokens in the band ($6 a million).
    const vk = await mint({ budget: 7 }, "claude");
    const ant = (extra: Record<string, unknown>, headers: Record<string, string> = {}, path = "/anthropic/v1/messages") =>
      send("", path, JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }], ...extra }), { authorization: "", "x-api-key": vk.key, "anthropic-version": "2023-06-01", ...headers });
    await refused(await ant({ tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }] }), /tool web_search_20250305 is billed per use/);
    await refused(await ant({ tools: [{ type: "code_execution_20250825", name: "code_execution" }] }), /code_execution/);
    await refused(await ant({ service_tier: "auto" }), /service tier/);
    expect(calls).toHaveLength(0);
    expect((await ant({ tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] })).status).toBe(200);
    expect((await ant({ service_tier: "standard_only" })).status).toBe(200);
    expect((await ant({}, {}, "/anthropic/v1/messages/count_tokens")).status).toBe(200);
    expect((await ant({}, { "anthropic-beta": "context-1m-2025-08-07" })).status).toBe(200);
    expect(calls).toHaveLength(4);
  });

  it("Gemini: grounding with Search is refused; code execution and a gemini-2.5-pro prompt past its 200,000-token band (priced by the band, issue 39) go", async () => {
    const { calls } = mockUpstream(() => json({ candidates: [], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 5 } }));
    const vk = await mint({ budget: 5 }, "gem");
    const gen = (model: string, body: Record<string, unknown>) =>
      send("", `/gemini/v1beta/models/${model}:generateContent`, JSON.stringify({ contents: [{ parts: [{ text: "hi" }] }], generationConfig: { maxOutputTokens: 16 }, ...body }), { authorization: "", "x-goog-api-key": vk.key });
    await refused(await gen("gemini-2.5-flash", { tools: [{ googleSearch: {} }] }), /googleSearch is billed per use/);
    await refused(await gen("gemini-2.5-flash", { tools: [{ google_search_retrieval: {} }] }), /google_search_retrieval/);
    expect(calls).toHaveLength(0);
    expect((await gen("gemini-2.5-flash", { tools: [{ codeExecution: {} }] })).status).toBe(200);
    expect((await gen("gemini-2.5-pro", {})).status).toBe(200);
    expect((await gen("gemini-2.5-pro", { contents: [{ parts: [{ text: "x".repeat(210_000) }] }] })).status).toBe(200);
    expect(calls).toHaveLength(3);
  });
});

describe("a stream cut early (issue 33)", () => {
  const sse = (events: [string, unknown][]) => events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join("");
  /** An Anthropic stream that has said `output_tokens: 1` and ended its text, and then waits (its message_delta would carry the count). */
  function anthropicStream() {
    return mockUpstream(() => {
      const head = sse([
        ["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-haiku-4-5", content: [], usage: { input_tokens: 10, output_tokens: 1 } } }],
        ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
        ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "a long answer ".repeat(50) } }],
        ["content_block_stop", { type: "content_block_stop", index: 0 }],
      ]);
      const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(head)) });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
  }

  it("a caller that leaves after the last content_block_stop pays its prompt and its whole output limit, not one token", async () => {
    anthropicStream();
    const vk = await mint({ budget: 5 }, "claude");
    const res = await exports.default.fetch("http://gateway/anthropic/v1/messages", {
      method: "POST", headers: { "x-api-key": vk.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 2_000, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("content_block_stop")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    await vi.waitFor(async () => expect((await spendOf(vk.name))!.reservedUsd).toBe(0));
    // claude-haiku-4-5: $1 in, $5 out per million: 10 in + 2,000 out.
    expect((await spendOf(vk.name))!.usd).toBeCloseTo((10 * 1 + 2_000 * 5) / 1e6, 12);
  });

  it("an OpenAI stream cut before its usage chunk, with no max_tokens, pays the most its model may give (its maxOutput), not 256", async () => {
    mockUpstream(() => {
      const chunk = { id: "c", object: "chat.completion.chunk", model: "gpt-4o-mini", choices: [{ index: 0, delta: { content: "word " } }], usage: null };
      const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(chunk)}\n\n`.repeat(3))) });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const vk = await mint({ budget: 5 });
    const body = JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "hi" }] });
    const res = await exports.default.fetch("http://gateway/openai/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${vk.key}`, "content-type": "application/json" }, body });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await vi.waitFor(async () => expect((await spendOf(vk.name))!.reservedUsd).toBe(0));
    // Its prompt (its body's bytes: a token is at least one) and gpt-4o-mini's 16,384 output tokens, at 0.15 / 0.6.
    const spent = (await spendOf(vk.name))!.usd;
    expect(spent).toBeCloseTo((body.length * 0.15 + 16_384 * 0.6) / 1e6, 12);
  });
});
