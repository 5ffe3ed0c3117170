// A request too large for its key, through the retry loop (src/proxy/too-large.ts, steps.ts): the
// limiter's refusal answered 413 with nothing sent, the provider's own refusal given back as it came
// after one attempt, and a pool trying its other members before either.
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_GATEWAY } from "../../src/config/limits";
import type { AcquireResult } from "../../src/limiter/types";
import { PoolRoute } from "../../src/pools/route";
import { DIALECTS } from "../../src/providers/dialects";
import type { LimiterCalls } from "../../src/proxy/limiter-client";
import { type Plan, run } from "../../src/proxy/run";
import type { Target } from "../../src/proxy/target";

const TOO_LARGE: AcquireResult = { granted: false, reason: "too_large", retryAfterMs: 0, tooLarge: { cost: 1_000_040, limit: 200_000, periodMs: 60_000 } };
/** OpenAI's answer to a request above its TPM (providers/dialects.ts cites where it is quoted). */
const openaiTooLarge = () =>
  new Response(JSON.stringify({ error: { message: "Request too large for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000, Requested 1000040. The input or output tokens must be reduced in order to run successfully.", type: "tokens", param: null, code: "rate_limit_exceeded" } }), {
    status: 429, headers: { "content-type": "application/json", "x-ratelimit-limit-tokens": "200000", "x-ratelimit-remaining-tokens": "200000" },
  });
const ok = () => new Response(JSON.stringify({ id: "chatcmpl-1", choices: [] }), { status: 200, headers: { "content-type": "application/json" } });

/** A key's limiter that answers every acquire with `answer`, and records what it is told. */
function limiter(answer: AcquireResult | "grant") {
  const settled: { cls: string; final: boolean }[] = [];
  const asked: string[] = [];
  const calls: LimiterCalls = {
    acquire: async (req) => (asked.push(req.leaseId), answer === "grant" ? { granted: true, leaseId: req.leaseId, waitedMs: 0, leaseTtlMs: 60_000, limit: 4 } : answer),
    settle: (_id, o) => void settled.push(o),
    settleNow: async (_id, o) => (settled.push(o), undefined),
    release: () => {},
    cancel: () => {},
    keepAlive: () => () => {},
  };
  return { calls, settled, asked };
}

function target(name: string, l: LimiterCalls): Target {
  return { url: new URL(`https://${name}.example/v1/chat/completions`), headers: new Headers(), key: { key: `openai:gpt-4o-mini:${name}`, provider: "openai", model: "gpt-4o-mini" }, limiter: l, dialect: DIALECTS.openai };
}

function plan(over: Partial<Plan> = {}): Plan {
  return {
    url: new URL("https://api.openai.com/v1/chat/completions"), method: "POST", headers: new Headers(), body: new Uint8Array(0),
    key: { key: "openai:gpt-4o-mini:0", provider: "openai", model: "gpt-4o-mini" }, dialect: DIALECTS.openai, cost: 1_000_040,
    deadline: Date.now() + 10_000, maxAttempts: 3, gateway: { ...DEFAULT_GATEWAY, baseBackoffMs: 1, maxBackoffMs: 5 },
    signal: new AbortController().signal, waitUntil: () => {}, ...over,
  };
}

const go = (p: Plan, l: LimiterCalls | null, fetch: typeof globalThis.fetch) => run(p, l, { fetch, now: Date.now, random: () => 0.5 });
const hostOf = (input: unknown) => new URL(String(input instanceof Request ? input.url : input)).hostname.split(".")[0];

describe("a request too large for its own key", () => {
  it("its limiter's refusal is 413 request_too_large naming the estimate and the limit; nothing is sent", async () => {
    const fetch = vi.fn();
    const res = await go(plan(), limiter(TOO_LARGE).calls, fetch);
    expect(res.status).toBe(413);
    expect(res.headers.get("x-slotgate-error")).toBe("request_too_large");
    expect(res.headers.get("x-slotgate-attempts")).toBe("0");
    const { error } = (await res.json()) as { error: { type: string; message: string } };
    expect(error.type).toBe("request_too_large");
    expect(error.message).toMatch(/estimated 1000040 tokens are more than the key's limit of 200000 tokens per minute/);
    expect(error.message).toMatch(/a smaller max_tokens/);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("an unsure estimate (media priced by their bytes) asks again at the limit and goes when it fits; the provider decides", async () => {
    const fetch = vi.fn(async () => ok());
    const costs: number[] = [];
    const calls: LimiterCalls = {
      ...limiter("grant").calls,
      // The key's limiter as it is: too large above its told limit, granted at or under it.
      acquire: async (req) => (costs.push(req.cost), req.cost > 200_000 ? TOO_LARGE : { granted: true, leaseId: req.leaseId, waitedMs: 0, leaseTtlMs: 60_000, limit: 4 }),
    };
    const res = await go(plan({ unsure: true }), calls, fetch);
    expect(res.status).toBe(200);
    expect(costs).toEqual([1_000_040, 200_000]);
    expect(fetch).toHaveBeenCalledTimes(1);
    // A sure one is refused as before, nothing sent.
    const again = await go(plan(), calls, vi.fn());
    expect(again.status).toBe(413);
  });

  it("the provider's own too-large 429 comes back as it is after one attempt, settled too_large (never a rate limit)", async () => {
    const fetch = vi.fn(async () => openaiTooLarge());
    const l = limiter("grant");
    const res = await go(plan(), l.calls, fetch);
    expect(res.status).toBe(429);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/^Request too large for gpt-4o-mini/);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(l.settled.map((o) => [o.cls, o.final])).toEqual([["too_large", true]]);
  });
});

describe("a pooled request too large for a member", () => {
  /** A pool of these members, the first one tried first (the others look busy to this isolate). */
  const pooled = (...members: [string, LimiterCalls][]) => {
    const views = new Map(members.slice(1).map(([name]) => [`openai:gpt-4o-mini:${name}`, { view: { waitMs: 5_000 }, at: Date.now(), sent: 0 }]));
    const route = new PoolRoute("team", members.map(([name, l]) => ({ name, target: target(name, l), credential: `sk-${name}-0123456789` })), 10_000, () => 0.25, views);
    return plan({ route });
  };

  it("goes to a member whose limit takes it", async () => {
    const hosts: string[] = [];
    const fetch = vi.fn(async (input: unknown) => (hosts.push(hostOf(input)!), ok()));
    const small = limiter(TOO_LARGE);
    const res = await go(pooled(["small", small.calls], ["big", limiter("grant").calls]), null, fetch);
    expect(res.status).toBe(200);
    expect(small.asked).toHaveLength(1); // asked first, it turned the request away
    expect(hosts).toEqual(["big"]);
  });

  it("after a member's provider refused it as too large, goes to the next; too large for every one, the last refusal as it came", async () => {
    const hosts: string[] = [];
    const fetch = vi.fn(async (input: unknown) => (hosts.push(hostOf(input)!), hostOf(input) === "a" ? openaiTooLarge() : ok()));
    expect((await go(pooled(["a", limiter("grant").calls], ["b", limiter("grant").calls]), null, fetch)).status).toBe(200);
    expect(hosts).toEqual(["a", "b"]);
    const both = vi.fn(async () => openaiTooLarge());
    const res = await go(pooled(["a", limiter("grant").calls], ["b", limiter("grant").calls]), null, both);
    expect(res.status).toBe(429);
    expect(both).toHaveBeenCalledTimes(2);
  });

  it("too large for every member's limiter: 413 request_too_large naming the pool, no member's limit; nothing sent", async () => {
    const fetch = vi.fn();
    const res = await go(pooled(["a", limiter(TOO_LARGE).calls], ["b", limiter(TOO_LARGE).calls]), null, fetch);
    expect(res.status).toBe(413);
    const { error } = (await res.json()) as { error: { message: string } };
    expect(error.message).toMatch(/more than any member of pool team takes in one request/);
    expect(error.message).not.toMatch(/200000/);
    expect(fetch).not.toHaveBeenCalled();
  });
});
