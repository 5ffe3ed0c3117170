// Usage and spend end to end: the official SDKs through `wrangler dev` to the stand-in, which
// reports usage in every answer. The ledger (D1, local) must hold exactly the tokens the stand-in
// reported, streamed or not, and cost them at the price table to the cent.
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, ANTHROPIC_MODEL, OPENAI_MODEL, anthropicVia, credential, openaiVia, runClients, useStack } from "./setup.ts";

/** A pool of one member for the budget test, and a price that makes its model expensive. */
const MEMBER_KEY = "sk-e2e-budget-member-0123456789";
const BUDGET_MODEL = "budget-model";
const vars = {
  USAGE_FLUSH_MS: "200",
  POOLS: JSON.stringify({ budgeted: { provider: "openai", members: [{ name: "m", secret: "POOL_KEY_BUDGET" }] } }),
  POOL_KEY_BUDGET: MEMBER_KEY,
  PRICES: JSON.stringify({ [BUDGET_MODEL]: { input: 1000, output: 1000 } }),
};
const stack = useStack({ admin: true, standin: { latencyMs: 20, streamChunks: 4 }, vars });
const admin = (path: string, init: RequestInit = {}) =>
  fetch(`${stack.gateway.url}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" } });

/** List prices in the built-in table (USD per million tokens): gpt-4o-mini and claude-haiku-4-5. */
const PRICE = { [OPENAI_MODEL]: { input: 0.15, output: 0.6 }, [ANTHROPIC_MODEL]: { input: 1, output: 5 } };

type Figures = { requests: number; inputTokens: number; outputTokens: number; cachedTokens: number; costUsd: number; unknownUsage: number };

async function byModel(since: number): Promise<Record<string, Figures>> {
  const res = await fetch(`${stack.gateway.url}/admin/usage?since=${since}&by=model`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  const { rows } = (await res.json()) as { rows: (Figures & { model: string })[] };
  const out: Record<string, Figures> = {};
  for (const r of rows) {
    const o = (out[r.model] ??= { requests: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, unknownUsage: 0 });
    for (const k of ["requests", "inputTokens", "outputTokens", "cachedTokens", "costUsd", "unknownUsage"] as const) o[k] += r[k];
  }
  return out;
}

describe("the ledger against the stand-in's own usage", () => {
  it("OpenAI and Anthropic, plain and streamed: tokens exactly, cost to the cent", { timeout: 90_000 }, async () => {
    const since = Date.now() - 60_000;
    stack.standin.resetStats();
    const oa = openaiVia(stack, credential("usage-oa"));
    const an = anthropicVia(stack, credential("usage-an"));
    const user = (i: number) => [{ role: "user" as const, content: `count these words please, round ${i} ${"x ".repeat(i * 7)}` }];
    let sdkSeenUsage = 0;
    for (let i = 0; i < 4; i++) {
      await oa.chat.completions.create({ model: OPENAI_MODEL, messages: user(i), max_tokens: 8 + i });
      // Asked for usage itself: it sees the usage chunk.
      for await (const c of await oa.chat.completions.create({ model: OPENAI_MODEL, messages: user(i), stream: true, stream_options: { include_usage: true } }))
        if (c.usage) sdkSeenUsage++;
      // Did not ask: the gateway asks for it, and the caller never sees it.
      for await (const c of await oa.chat.completions.create({ model: OPENAI_MODEL, messages: user(i), stream: true }))
        expect(c.usage ?? null).toBeNull();
      await an.messages.create({ model: ANTHROPIC_MODEL, max_tokens: 16 + i, messages: user(i) });
      const s = await an.messages.create({ model: ANTHROPIC_MODEL, max_tokens: 16 + i, messages: user(i), stream: true });
      for await (const _ of s);
    }
    expect(sdkSeenUsage).toBe(4);
    const reported = stack.standin.stats();
    expect(reported.successes).toBe(20);

    // Rollups are written every USAGE_FLUSH_MS: poll the ledger until all 20 answers are in.
    let got: Record<string, Figures> = {};
    const end = Date.now() + 30_000;
    while (Date.now() < end) {
      got = await byModel(since);
      if ((got[OPENAI_MODEL]?.requests ?? 0) + (got[ANTHROPIC_MODEL]?.requests ?? 0) >= 20) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const oaRow = got[OPENAI_MODEL]!;
    const anRow = got[ANTHROPIC_MODEL]!;
    expect(oaRow.requests).toBe(12);
    expect(anRow.requests).toBe(8);
    expect(oaRow.unknownUsage + anRow.unknownUsage).toBe(0);
    expect(oaRow.inputTokens + anRow.inputTokens).toBe(reported.usage.input);
    expect(oaRow.outputTokens + anRow.outputTokens).toBe(reported.usage.output);
    for (const [model, row] of [[OPENAI_MODEL, oaRow], [ANTHROPIC_MODEL, anRow]] as const) {
      const p = PRICE[model]!;
      const expected = (row.inputTokens * p.input + row.outputTokens * p.output) / 1e6;
      expect(Math.round(row.costUsd * 100)).toBe(Math.round(expected * 100));
      expect(row.costUsd).toBeCloseTo(expected, 9);
    }
  });
});

describe("a virtual key's budget, driven by 8 processes", () => {
  it("stops within one in-flight window's cost of $0.50, or one request's estimate short of it; then every request gets budget_exceeded and nothing reaches the provider", { timeout: 120_000 }, async () => {
    stack.standin.configure({ latencyMs: 150 });
    const made = await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name: "e2e-budget", pool: "budgeted", budget: 0.5, budgetPeriod: "day" }) });
    expect(made.status).toBe(201);
    const vk = (await made.json()) as { key: string };
    const processes = 8;
    const concurrency = 2;
    const results = (await runClients(stack, { apiKey: vk.key, processes, requests: 12, concurrency, model: BUDGET_MODEL })).flat();
    let ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 402 && r.error === "budget_exceeded").length;
    expect(ok + refused).toBe(results.length);
    expect(refused).toBeGreaterThan(0);
    const fleetOk = ok;
    // Refusals count what requests in flight reserved (their estimates run above their true cost),
    // so the fleet may stop a little short. One caller then goes on, one request at a time, until
    // it is refused with nothing in flight: the spend and its own estimate no longer fit.
    const one = openaiVia(stack, vk.key);
    let estimate = Number.NaN;
    for (let i = 0; i < 50; i++) {
      const res = await one.chat.completions.create({ model: BUDGET_MODEL, max_tokens: 16, messages: [{ role: "user", content: `finisher ${i}` }] }).then(
        () => ({ status: 200, message: "" }),
        (e: { status?: number; message?: string }) => ({ status: e.status ?? 0, message: e.message ?? "" }),
      );
      if (res.status !== 200) {
        expect(res.status).toBe(402);
        estimate = Number(/may cost up to \$([\d.]+)/.exec(res.message)?.[1]);
        break;
      }
      ok++;
    }
    expect(estimate).toBeGreaterThan(0);
    const sent = stack.standin.stats().perCredential[MEMBER_KEY] ?? 0;
    expect(sent).toBe(ok);

    const list = (await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; spend: { usd: number; reservedUsd: number } }[] };
    const spend = list.virtualKeys.find((k) => k.name === "e2e-budget")!.spend;
    expect(spend.reservedUsd).toBe(0);
    // The cost of one in-flight window: every process's requests in flight at once, at this run's mean cost a request.
    const perRequest = spend.usd / ok;
    const window = processes * concurrency * perRequest;
    // Refused because it would not fit: at most its own estimate short of the budget.
    expect(spend.usd + estimate).toBeGreaterThan(0.5);
    expect(spend.usd).toBeLessThanOrEqual(0.5 + window);
    console.log(`budget $0.50: spent $${spend.usd.toFixed(4)} in ${ok} answers (${fleetOk} from the fleet; $${perRequest.toFixed(4)} each; window $${window.toFixed(4)}), ${refused} refused in the fleet`);

    // From now on: refused, and not one more request reaches the provider.
    const after = await runClients(stack, { apiKey: vk.key, processes: 2, requests: 4, concurrency: 2, model: BUDGET_MODEL });
    expect(after.flat().every((r) => r.status === 402 && r.error === "budget_exceeded")).toBe(true);
    expect(stack.standin.stats().perCredential[MEMBER_KEY] ?? 0).toBe(sent);

    // The ledger files these answers under the virtual key and its pool.
    const end = Date.now() + 20_000;
    let rows: { virtualKey: string | null; requests: number }[] = [];
    while (Date.now() < end) {
      rows = ((await (await admin(`/admin/usage?since=${Date.now() - 600_000}&by=virtualKey`)).json()) as { rows: typeof rows }).rows;
      if (rows.filter((r) => r.virtualKey === "e2e-budget").reduce((a, r) => a + r.requests, 0) >= ok) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(rows.filter((r) => r.virtualKey === "e2e-budget").reduce((a, r) => a + r.requests, 0)).toBe(ok);
  });
});
