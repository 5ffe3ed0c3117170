import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { CHAT, json, mockUpstream } from "../support/upstream";

const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
const admin = (path: string, init: RequestInit = {}) => exports.default.fetch(`http://gateway${path}`, { ...init, headers: ADMIN });

let n = 0;
async function mint(extra: Record<string, unknown>) {
  const name = `budget-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name, pool: "duo", ...extra }) });
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
