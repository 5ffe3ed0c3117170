// One Claude model on three clouds in one pool, end to end (issue 41, item 6): `wrangler dev` with
// the pool of test/support/clouds-pool.ts (an Anthropic key, a Bedrock member the gateway signs
// for, a Vertex member whose tokens it mints), the stand-in enforcing each member's own quota
// (Anthropic's with rate-limit headers, Bedrock's and Vertex's with none), and the official
// Anthropic SDK holding only a virtual key. Every request is answered, whole and streamed, each
// member serves some, and the ledger prices each member's answers at its own price; a budgeted key
// reserves at the dearest member's price and, near its cap, is refused at once.
import Anthropic from "@anthropic-ai/sdk";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CLOUDS_POOLS, cloudsProviders, cloudsStandin, cloudsVars, CLOUDS, type Cloud, costOf, MEMBER, MODEL, newCredentials, POOL, RATES, servedBy,
} from "../support/clouds-pool.ts";
import { type Gateway, startGateway } from "../support/gateway.ts";
import { Admin } from "../support/pools.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";
import { ADMIN_TOKEN, rejection } from "./setup.ts";

const creds = newCredentials();
/**
 * Each member's quota: Anthropic's 480 a minute replenished continuously (docs.claude.com/en/api/rate-limits:
 * a token bucket), Bedrock's and Vertex's 20 a minute (their quotas are per minute: Bedrock
 * userguide/quotas, Vertex generative-ai/docs/quotas), each told by no header.
 */
const QUOTAS = { anthropic: { rpm: 480, burst: 1 / 60 }, bedrock: { rpm: 20, burst: 1 }, vertex: { rpm: 20, burst: 1 } };
let standin: Standin;
let gateway: Gateway;

beforeAll(async () => {
  standin = await startStandin(cloudsStandin(creds, QUOTAS, { latencyMs: 40, streamChunks: 3, outputTokens: 9 }));
  gateway = await startGateway({
    providers: cloudsProviders(standin.url),
    vars: { ...cloudsVars(standin, creds), ADMIN_TOKEN, USAGE_FLUSH_MS: "200" },
    verbose: !!process.env.E2E_VERBOSE,
  });
});
afterAll(async () => {
  const failed = (await Promise.allSettled([gateway?.close(), standin?.close()])).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
});

const admin = () => new Admin(gateway.url, ADMIN_TOKEN);
let minted = 0;
const mint = async (extra: Record<string, unknown> = {}) => {
  const res = await admin().fetch("POST", "/admin/virtual-keys", { name: `clouds-${++minted}`, pool: POOL, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { key: string };
};
/** The Anthropic SDK as docs/pools-and-virtual-keys.md shows it: the gateway's /anthropic, a virtual key. */
const claude = (key: string) => new Anthropic({ apiKey: key, baseURL: `${gateway.url}/anthropic`, maxRetries: 0, timeout: 30_000 });
const ask = (i: number) => ({ model: MODEL, max_tokens: 32, messages: [{ role: "user" as const, content: `Count to three, request ${i}` }] });

describe("one Claude model on three clouds", () => {
  it("the Anthropic SDK through a virtual key: every request answered, whole and streamed, each member serving some at its own quota, each answer in the ledger at its member's price", { timeout: 120_000 }, async () => {
    const since = Date.now() - 1_000;
    const client = claude((await mint()).key);
    standin.resetStats();
    const N = 60;
    // More at once than any member's quota holds: 20 a minute at Bedrock and at Vertex.
    const results = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        if (i % 2 === 0) return client.messages.create(ask(i));
        return client.messages.stream(ask(i)).finalMessage();
      }),
    );
    for (const m of results) {
      expect(m.type).toBe("message");
      expect(m.stop_reason).toBe("end_turn");
      expect(m.content[0]).toMatchObject({ type: "text" });
      expect(m.usage.output_tokens).toBe(9);
    }
    const served = servedBy(standin.stats(), creds);
    for (const c of CLOUDS) expect(served[c].answers, c).toBeGreaterThan(0);
    // Every answer the callers got is one the stand-in counted: none twice, none lost.
    expect(CLOUDS.reduce((a, c) => a + served[c].answers, 0)).toBe(N);

    // The ledger: each member's limiter key, its requests and tokens as the stand-in counted them,
    // its cost at its own member's price (the limiters write their minutes every USAGE_FLUSH_MS).
    const keys = await memberKeys();
    expect(keys.bedrock).toMatch(/^bedrock:us-east-1\/us\.anthropic\.claude-haiku-4-5-20251001-v1:0:[0-9a-f]{16}$/);
    // Vertex keys by base model: the `@version` is dropped (its quotas are per base model).
    expect(keys.vertex).toMatch(/^vertex:us-east5\/claude-haiku-4-5:[0-9a-f]{16}$/);
    let rows: UsageRow[] = [];
    const requestsOf = (c: Cloud) => rows.filter((r) => r.key === keys[c]).reduce((a, r) => a + r.requests, 0);
    for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
      rows = await usageByKey(since);
      if (CLOUDS.every((c) => requestsOf(c) === served[c].answers)) break;
    }
    for (const c of CLOUDS) {
      const mine = rows.filter((r) => r.key === keys[c]);
      const sum = (f: keyof Omit<UsageRow, "key">) => mine.reduce((a, r) => a + r[f], 0);
      expect({ c, requests: sum("requests"), input: sum("inputTokens"), output: sum("outputTokens") }).toEqual({ c, requests: served[c].answers, input: served[c].input, output: served[c].output });
      expect(sum("costUsd"), c).toBeCloseTo(costOf(c, served[c]), 10);
    }
  });
});

describe("docs/pools-and-virtual-keys.md", () => {
  it("shows the pool this file runs, as POOLS takes it", () => {
    const doc = readFileSync(resolve(import.meta.dirname, "../../docs/pools-and-virtual-keys.md"), "utf8");
    const section = doc.slice(doc.indexOf("## One Claude model on three clouds"));
    const block = /```json\n([\s\S]*?)\n```/.exec(section);
    expect(JSON.parse(block![1]!)).toEqual(CLOUDS_POOLS);
  });
});

describe("a budgeted virtual key over the pool", () => {
  // The body as the SDK sends it, and a worst case at each member's price (input by bytes, output by max_tokens).
  const body = (maxTokens: number) => JSON.stringify({ model: MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: "Count to three" }] });
  const worst = (c: Cloud, maxTokens: number) => (new TextEncoder().encode(body(maxTokens)).byteLength * RATES[c].input + maxTokens * RATES[c].output) / 1e6;

  it("reserves at the dearest member's price (Bedrock's): a budget that fits Anthropic's worst case but not Bedrock's is refused at once, nothing sent", { timeout: 30_000 }, async () => {
    const budget = Number(((worst("anthropic", 4_000) + worst("bedrock", 4_000)) / 2).toFixed(6));
    const client = claude((await mint({ budget })).key);
    standin.resetStats();
    const t0 = Date.now();
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 4_000, messages: [{ role: "user", content: "Count to three" }] }));
    const ms = Date.now() - t0;
    expect(err).toBeInstanceOf(Anthropic.APIError);
    const e = err as InstanceType<typeof Anthropic.APIError>;
    expect(e.status).toBe(402);
    expect(e.error).toMatchObject({ error: { type: "budget_exceeded", message: expect.stringContaining(`may cost up to $${worst("bedrock", 4_000).toFixed(4)}`) } });
    expect(standin.stats().log).toHaveLength(0);
    // Refused before any queue or upstream: well under one answer's latency plus a round trip.
    expect(ms).toBeLessThan(5_000);
  });

  it("near its cap: a request that could overrun it is refused with the contract's message (how to fit), and with max_tokens as it says, it goes", { timeout: 30_000 }, async () => {
    // Room for one request of 600 output tokens at the dearest price, and less than any answer costs
    // (at least 4 input and 9 output tokens at the cheapest member's price) on top.
    const budget = Number((worst("bedrock", 600) + 20e-6).toFixed(6));
    const client = claude((await mint({ budget })).key);
    const first = await client.messages.create({ model: MODEL, max_tokens: 600, messages: [{ role: "user", content: "Count to three" }] });
    expect(first.stop_reason).toBe("end_turn");
    standin.resetStats();
    const err = await rejection(client.messages.create({ model: MODEL, max_tokens: 600, messages: [{ role: "user", content: "Count to three" }] }));
    const e = err as InstanceType<typeof Anthropic.APIError>;
    expect(e.status).toBe(402);
    const message = (e.error as { error: { message: string } }).error.message;
    // docs/contract.md, 402 budget_exceeded: the spend, the budget, what the request may cost, and the largest output limit that fits.
    expect(message).toMatch(/has spent \$[\d.]+ of its total budget of \$[\d.]+; this request may cost up to \$[\d.]+: with max_tokens at most ([\d,]+) it would fit$/);
    expect(standin.stats().log).toHaveLength(0);
    const most = Number(/at most ([\d,]+)/.exec(message)![1]!.replaceAll(",", ""));
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(600);
    const fits = await client.messages.create({ model: MODEL, max_tokens: most, messages: [{ role: "user", content: "Count to three" }] });
    expect(fits.stop_reason).toBe("end_turn");
  });
});

interface UsageRow {
  key: string;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

async function usageByKey(since: number): Promise<UsageRow[]> {
  const res = await admin().fetch("GET", `/admin/usage?since=${since}&by=key`);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { rows: UsageRow[] }).rows;
}

/** Each member's limiter key for the model, as GET /admin/pools lists them. */
async function memberKeys(): Promise<Record<Cloud, string>> {
  const pool = (await admin().pools()).pools.find((p) => p.name === POOL)!;
  const keyOf = (c: Cloud) => pool.members.find((m) => m.name === MEMBER[c])!.keys.find((k) => k.includes(MODEL))!;
  return { anthropic: keyOf("anthropic"), bedrock: keyOf("bedrock"), vertex: keyOf("vertex") };
}
