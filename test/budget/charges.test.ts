// A budget is a cap (issue 39), through the Worker with the provider mocked: a request is reserved
// at the most it can cost, so concurrent requests end within one worst case of the cap; a request
// that was sent is charged even if its caller left, its time ran out or its answer broke off (each
// attempt that was sent), and a retry after such an attempt first holds room for itself.
import { afterEach, describe, expect, it, vi } from "vitest";
import { callWith } from "../support/app";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { admin, mint } from "../support/vk";

afterEach(() => vi.restoreAllMocks());

type Spend = { usd: number; reservedUsd: number };
const spendOf = async (name: string): Promise<Spend> =>
  ((await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; spend: Spend }[] }).virtualKeys.find((k) => k.name === name)!.spend;
const settled = async (name: string) => {
  await vi.waitFor(async () => expect((await spendOf(name)).reservedUsd).toBe(0), { timeout: 5_000 });
  return (await spendOf(name)).usd;
};

const body = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: "gpt-5", messages: [{ role: "user", content: "x".repeat(340) }], ...extra });
const post = (key: string, b: string, vars: Record<string, string> = {}, signal?: AbortSignal) =>
  callWith("/openai/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: b, signal }, vars);
/** gpt-5: $1.25 in, $10 out per million; the worst case of `b` with its output limit. */
const worst = (b: string, output: number) => (new TextEncoder().encode(b).byteLength * 1.25 + output * 10) / 1e6;

/** An upstream that never answers until the attempt's signal fires (its caller left, or its time ran out). */
const hanging = (req: Request) => new Promise<Response>((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason)));

describe("reserved at the most a request can cost", () => {
  it("$0.50 left on gpt-5: requests without an output limit are refused with how to fit; with one, the concurrent ones end within the cap", async () => {
    mockUpstream(async () => (await new Promise((r) => setTimeout(r, 30)), json({ ...CHAT, model: "gpt-5", usage: { prompt_tokens: 100, completion_tokens: 2_000, total_tokens: 2_100 } })));
    const vk = await mint("duo", { budget: 0.5 });
    const unbounded = await Promise.all(Array.from({ length: 20 }, () => post(vk.key, body())));
    expect(unbounded.every((r) => r.status === 402)).toBe(true);
    const message = ((await unbounded[0]!.json()) as { error: { message: string } }).error.message;
    // Its worst case is gpt-5's 128,000 output tokens: $1.28, more than the whole budget.
    expect(message).toMatch(/this request may cost up to \$1\.2805: with max_completion_tokens at most 49,9\d\d it would fit/);
    // With an output limit each holds $0.0205: the 60 at once never hold more than the budget, and what they spend ends within it.
    const limited = body({ max_completion_tokens: 2_000 });
    const answers = await Promise.all(Array.from({ length: 60 }, () => post(vk.key, limited)));
    const served = answers.filter((r) => r.status === 200).length;
    expect(served).toBeGreaterThan(0);
    expect(answers.filter((r) => r.status !== 200).every((r) => r.status === 402)).toBe(true);
    const spent = await settled(vk.name);
    expect(spent).toBeCloseTo(served * ((100 * 1.25 + 2_000 * 10) / 1e6), 10);
    expect(spent).toBeLessThanOrEqual(0.5);
  });
});

describe("a request that was sent is charged", () => {
  it("its caller left while the provider worked on it: charged its worst case, not $0", async () => {
    const { calls } = mockUpstream((req) => hanging(req));
    const vk = await mint("duo", { budget: 5 });
    const b = body({ max_completion_tokens: 1_000 });
    const leave = new AbortController();
    const res = post(vk.key, b, {}, leave.signal);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    leave.abort();
    await res.catch(() => {});
    // The provider bills the work it did, which the gateway never saw: its prompt and its whole output limit.
    expect(await settled(vk.name)).toBeCloseTo(worst(b, 1_000), 12);
  });

  it("each attempt that ran out of time is charged; a retry first holds room for itself, and is refused when there is none", async () => {
    const { calls } = mockUpstream((req) => hanging(req));
    const b = body({ max_completion_tokens: 1_000 });
    const vars = { UPSTREAM_TIMEOUT_MS: "150", MAX_ATTEMPTS: "2", BASE_BACKOFF_MS: "1" };
    const roomy = await mint("duo", { budget: 5 });
    const twice = await post(roomy.key, b, vars);
    expect(twice.status).toBe(502);
    expect(calls).toHaveLength(2);
    expect(await settled(roomy.name)).toBeCloseTo(2 * worst(b, 1_000), 12);
    // Room for one worst case only: the first attempt is charged, the second never sent.
    const tight = await mint("duo", { budget: worst(b, 1_000) * 1.5 });
    const once = await post(tight.key, b, vars);
    expect(once.status).toBe(402);
    expect(((await once.json()) as { error: { message: string } }).error.message).toMatch(/its next attempt \(one before it was sent and got no answer\) may cost up to/);
    expect(calls).toHaveLength(3);
    expect(await settled(tight.name)).toBeCloseTo(worst(b, 1_000), 12);
  });

  it("a plain answer that broke off is charged; a refused connection (nothing sent) is not", async () => {
    let broken = true;
    mockUpstream(() => {
      if (!broken) throw new Error("Network connection lost.");
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode('{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"par'));
          c.error(new Error("Network connection lost."));
        },
      });
      return new Response(stream, { headers: { "content-type": "application/json" } });
    });
    const b = body({ max_completion_tokens: 500 });
    const vars = { MAX_ATTEMPTS: "1" };
    const cut = await mint("duo", { budget: 5 });
    expect((await post(cut.key, b, vars)).status).toBe(502);
    expect(await settled(cut.name)).toBeCloseTo(worst(b, 500), 12);
    broken = false;
    const refused = await mint("duo", { budget: 5 });
    expect((await post(refused.key, b, vars)).status).toBe(502);
    expect(await settled(refused.name)).toBe(0);
  });
});
