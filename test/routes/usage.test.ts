import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import { parseExposition, value } from "../support/exposition";
import { CHAT, chat, json, mockUpstream } from "../support/upstream";
import { anthropicStream, openaiStream } from "../usage/fixtures";

afterEach(() => vi.restoreAllMocks());

const TOKEN = "test-admin-token";
const admin = (path: string, token: string | null = TOKEN) =>
  exports.default.fetch(`http://gateway${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
const usage = (q: string) => admin(`/admin/usage?${q}`);

const USAGE = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 40 } };
const sse = (text: string) => new Response(text, { headers: { "content-type": "text/event-stream" } });

/**
 * Waits until the key's limiter holds `n` answers' usage (it rides the fire-and-forget release or
 * settle after each body), then writes them to the ledger now rather than in USAGE_FLUSH_MS.
 */
async function flushed(key: string, n: number): Promise<void> {
  const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
  await vi.waitFor(() => runInDurableObject(stub, (obj: Limiter) => expect(obj.ledger.pending).toBe(n)));
  await runInDurableObject(stub, (obj: Limiter) => obj.ledger.flush(obj.now()));
}

describe("usage through the gateway, into the ledger", () => {
  it("plain and streamed answers: tokens and cost per caller, the injected usage chunk never reaches the caller", async () => {
    const since = Date.now() - 60_000;
    const { calls } = mockUpstream((req) =>
      req.url.includes("/v1/messages") ? sse(anthropicStream) : req.headers.get("x-stream") ? sse(openaiStream(true)) : json({ ...CHAT, usage: USAGE }),
    );
    const key = (await chat({ key: "sk-usage-1", headers: { "x-slotgate-caller": "alice" } })).headers.get("x-slotgate-key")!;
    await (await chat({ key: "sk-usage-1", headers: { "x-slotgate-caller": "alice" } })).text();
    await (await chat({ key: "sk-usage-1", headers: { "x-slotgate-caller": "bob" } })).text();
    // A streamed chat whose caller did not ask for usage: the gateway asks, and strips the answer.
    const streamed = await chat({ key: "sk-usage-1", headers: { "x-slotgate-caller": "bob", "x-stream": "1" }, body: { model: "gpt-4o-mini", stream: true, messages: [] } });
    const text = await streamed.text();
    expect(JSON.parse(calls.at(-1)!.body).stream_options).toEqual({ include_usage: true });
    expect(text).toContain("[DONE]");
    expect(text).not.toContain("prompt_tokens");
    await flushed(key, 4);

    const res = await usage(`since=${since}&by=caller`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { by: string; rows: Record<string, number | string>[]; totals: Record<string, number> };
    expect(body.by).toBe("caller");
    const sum = (caller: string, field: string) => body.rows.filter((r) => r.caller === caller).reduce((a, r) => a + (r[field] as number), 0);
    const of = (caller: string) => ({ req: sum(caller, "requests"), in: sum(caller, "inputTokens"), out: sum(caller, "outputTokens"), cached: sum(caller, "cachedTokens"), cost: sum(caller, "costUsd") });
    expect(of("alice")).toMatchObject({ req: 2, in: 200, out: 40, cached: 80 });
    expect(of("bob")).toMatchObject({ req: 2, in: 119, out: 30, cached: 40 });
    // gpt-4o-mini: 0.15 in, 0.075 cached, 0.6 out per million.
    expect(of("alice").cost).toBeCloseTo(2 * (60 * 0.15 + 40 * 0.075 + 20 * 0.6) / 1e6, 12);
    expect(body.rows.every((r) => typeof r.minute === "string" && !Number.isNaN(Date.parse(r.minute as string)))).toBe(true);

    // The same tokens in the key's Prometheus counters.
    const families = parseExposition(await (await admin("/admin/metrics")).text());
    const k = { provider: "openai", model: "gpt-4o-mini", key_hash: key.split(":")[2]! };
    expect(value(families, "slotgate_tokens_total", { ...k, direction: "input" })).toBe(319);
    expect(value(families, "slotgate_tokens_total", { ...k, direction: "output" })).toBe(70);
    expect(value(families, "slotgate_tokens_total", { ...k, direction: "cached" })).toBe(120);
    expect(value(families, "slotgate_cost_usd_total", k)).toBeCloseTo(((319 - 120) * 0.15 + 120 * 0.075 + 70 * 0.6) / 1e6, 12);
  });

  it("by model and by key; an Anthropic stream's message_start and message_delta; unknown and unpriced counted apart", async () => {
    const since = Date.now() - 60_000;
    mockUpstream((req) => (req.url.includes("/v1/messages") ? sse(anthropicStream) : json(CHAT)));
    const a = await exports.default.fetch("http://gateway/anthropic/v1/messages", {
      method: "POST",
      headers: { "x-api-key": "sk-ant-usage", "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-sonnet-4-20250514", stream: true, max_tokens: 64, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(await a.text()).toBe(anthropicStream);
    const akey = a.headers.get("x-slotgate-key")!;
    // No usage in the answer, and a model with no price.
    const u = await chat({ key: "sk-usage-2", model: "no-such-model" });
    await u.text();
    const ukey = u.headers.get("x-slotgate-key")!;
    await flushed(akey, 1);
    await flushed(ukey, 1);

    const byModel = (await (await usage(`since=${since}&by=model`)).json()) as { rows: Record<string, unknown>[]; groups: Record<string, unknown>[]; totals: Record<string, number>; writtenEveryMs: number };
    const claude = byModel.rows.find((r) => r.model === "claude-sonnet-4-20250514")!;
    expect(claude).toMatchObject({ requests: 1, inputTokens: 125, outputTokens: 15, cachedTokens: 100, unknownUsage: 0 });
    expect(claude.costUsd as number).toBeCloseTo((25 * 3 + 100 * 0.3 + 15 * 15) / 1e6, 12);
    expect(byModel.rows.find((r) => r.model === "no-such-model")).toMatchObject({ requests: 1, unknownUsage: 1, inputTokens: 0, costUsd: 0 });
    // One whole figure per model over the range (its minute rows summed), the costliest first, adding up to the totals.
    const claudeTotal = byModel.groups.find((g) => g.model === "claude-sonnet-4-20250514")!;
    const claudeRows = byModel.rows.filter((r) => r.model === "claude-sonnet-4-20250514");
    expect(claudeTotal).toMatchObject({ requests: claudeRows.reduce((n, r) => n + (r.requests as number), 0), inputTokens: 125, outputTokens: 15 });
    expect(new Set(byModel.groups.map((g) => g.model)).size).toBe(byModel.groups.length);
    const costs = byModel.groups.map((g) => g.costUsd as number);
    expect(costs).toEqual([...costs].sort((x, y) => y - x));
    expect(byModel.groups.reduce((n, g) => n + (g.requests as number), 0)).toBe(byModel.totals.requests);
    expect(byModel.writtenEveryMs).toBeGreaterThan(0);
    const byKey = (await (await usage(`since=${new Date(since).toISOString()}&by=key`)).json()) as { rows: Record<string, unknown>[] };
    expect(byKey.rows.some((r) => r.key === akey)).toBe(true);
    const byPool = (await (await usage(`since=${since}&by=pool`)).json()) as { rows: Record<string, unknown>[] };
    expect(byPool.rows.every((r) => r.pool === null)).toBe(true);
  });

  it("a range with nothing in it: no rows, zero totals", async () => {
    const body = (await (await usage("since=0&until=60000")).json()) as { rows: unknown[]; totals: Record<string, number>; truncated: boolean };
    expect(body.rows).toEqual([]);
    expect(body.totals.requests).toBe(0);
    expect(body.truncated).toBe(false);
  });

  it("wants the admin token and refuses bad parameters with the reason", async () => {
    expect((await admin("/admin/usage", null)).status).toBe(401);
    for (const [q, why] of [["by=team", /by must be one of/], ["since=yesterday", /epoch milliseconds or ISO 8601/], ["since=2000&until=1000", /before until/]] as const) {
      const res = await usage(q);
      expect(res.status, q).toBe(400);
      const body = (await res.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe("invalid_request");
      expect(body.error.message).toMatch(why);
    }
  });
});
