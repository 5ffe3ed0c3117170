// Rate limits of the stand-in: header formats, buckets, retry-after modes, concurrency, quota, auth.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  anHeaders, anthropicClient, chatBody, messagesBody, oaHeaders, openaiClient, post, sleep, standin,
} from "./standin-helpers.ts";

const GO_DURATION = /^(\d+h)?(\d+m)?\d+(\.\d+)?s$|^\d+ms$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

async function caught<T>(p: Promise<unknown>, type: abstract new (...a: never[]) => T): Promise<T> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(type);
  return e as T;
}

describe("stand-in: rate-limit headers", () => {
  it("OpenAI: limit, remaining and Go-duration resets for requests and tokens", async () => {
    const s = await standin({ rpm: 60, tpm: 10_000 });
    const res = await post(s, "/v1/chat/completions", chatBody({ max_tokens: 100 }), oaHeaders());
    const h = res.headers;
    expect(h.get("x-ratelimit-limit-requests")).toBe("60");
    expect(h.get("x-ratelimit-remaining-requests")).toBe("59");
    expect(h.get("x-ratelimit-reset-requests")).toMatch(GO_DURATION);
    expect(h.get("x-ratelimit-reset-requests")).toMatch(/^(1s|9\d\d(\.\d+)?ms|\d{3}ms)$/);
    expect(h.get("x-ratelimit-limit-tokens")).toBe("10000");
    expect(Number(h.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(10_000 - 100);
    expect(h.get("x-ratelimit-reset-tokens")).toMatch(GO_DURATION);
    expect(h.get("x-request-id")).toMatch(/^req_/);
  });

  it("Anthropic: requests, tokens, input and output tokens with RFC 3339 resets", async () => {
    const s = await standin({ rpm: 50, tpm: 0, itpm: 30_000, otpm: 8_000 });
    const { response } = await anthropicClient(s).messages.create(messagesBody({ max_tokens: 1000 })).withResponse();
    const h = response.headers;
    expect(h.get("anthropic-ratelimit-requests-limit")).toBe("50");
    expect(h.get("anthropic-ratelimit-requests-remaining")).toBe("49");
    expect(h.get("anthropic-ratelimit-input-tokens-limit")).toBe("30000");
    expect(h.get("anthropic-ratelimit-output-tokens-limit")).toBe("8000");
    expect(h.get("anthropic-ratelimit-output-tokens-remaining")).toBe("7000");
    // tokens-* is the two together (as a recorded answer shows: tidyllm's fixtures, third party).
    expect(h.get("anthropic-ratelimit-tokens-limit")).toBe("38000");
    expect(h.get("anthropic-ratelimit-tokens-remaining")).toBe(String(Number(h.get("anthropic-ratelimit-input-tokens-remaining")) + 7000));
    for (const k of ["requests", "tokens", "input-tokens", "output-tokens"]) {
      const reset = h.get(`anthropic-ratelimit-${k}-reset`)!;
      expect(reset).toMatch(RFC3339);
      expect(Date.parse(reset)).toBeGreaterThan(Date.now() - 1000);
    }
    expect(h.get("request-id")).toMatch(/^req_/);
  });

  it("Anthropic's prompt cache: a marked prefix is written, then read; its reads left out of the input window, its writes not", async () => {
    const s = await standin({ rpm: 1_000, tpm: 0, itpm: 30_000, otpm: 8_000, burst: 1 });
    const client = anthropicClient(s);
    // A 2,000-token system prompt (8,000 characters) marked for the cache, and a short question after it.
    const system = [{ type: "text" as const, text: "policy ".repeat(1_143).slice(0, 8_000), cache_control: { type: "ephemeral" as const } }];
    const ask = (q: string) => client.messages.create(messagesBody({ system, messages: [{ role: "user" as const, content: q }] })).withResponse();
    const remaining = (h: Headers) => Number(h.get("anthropic-ratelimit-input-tokens-remaining"));
    const first = await ask("first question");
    expect(first.data.usage).toMatchObject({ cache_creation_input_tokens: 2_000, cache_read_input_tokens: 0, input_tokens: 4 });
    // Told at admission: the write and the rest counted (less a few tokens of refill meanwhile).
    expect(remaining(first.response.headers)).toBeLessThan(30_000 - 1_900);
    const second = await ask("second one!!!!!");
    expect(second.data.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 2_000, input_tokens: 4 });
    // The read left out: the window lost only the question (and refilled a little meanwhile).
    expect(remaining(second.response.headers)).toBeGreaterThanOrEqual(remaining(first.response.headers) - 4);
    // Another prefix, or one under 1,024 tokens, is not read from it.
    const other = await client.messages.create(messagesBody({ system: [{ ...system[0]!, text: `${system[0]!.text.slice(0, -1)}?` }] }));
    expect(other.usage).toMatchObject({ cache_creation_input_tokens: 2_000, cache_read_input_tokens: 0 });
    const short = await client.messages.create(messagesBody({ system: [{ ...system[0]!, text: "short" }] }));
    expect(short.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it("Anthropic's token count: its own requests window at twice the messages' rate, no tokens, nothing drawn from the messages' windows", async () => {
    const s = await standin({ rpm: 60, tpm: 0, itpm: 30_000, otpm: 8_000, burst: { requests: 2 } });
    const client = anthropicClient(s);
    const counts = await Promise.all([1, 2].map(() => client.messages.countTokens({ model: "claude-haiku-4-5", messages: [{ role: "user", content: "how long is this?" }] }).withResponse()));
    expect(counts.map((c) => c.data.input_tokens)).toEqual([5, 5]);
    const h = counts[1]!.response.headers;
    expect([h.get("anthropic-ratelimit-requests-limit"), h.get("anthropic-ratelimit-input-tokens-limit")]).toEqual(["120", null]);
    // Both of the messages' two requests are still there; a third is refused.
    const asked = [await post(s, "/v1/messages", messagesBody(), anHeaders()), await post(s, "/v1/messages", messagesBody(), anHeaders()), await post(s, "/v1/messages", messagesBody(), anHeaders())];
    expect(asked.map((r) => r.status)).toEqual([200, 200, 429]);
    // Its own window is spent now (a count takes no max_tokens); and it is free: only the messages' tokens were served.
    expect((await post(s, "/v1/messages/count_tokens", { model: "claude-haiku-4-5", messages: [{ role: "user", content: "hi" }] }, anHeaders())).status).toBe(429);
    const input = ((await asked[0]!.json()) as { usage: { input_tokens: number } }).usage.input_tokens;
    expect(s.stats().usage.input).toBe(2 * input);
  });

  it("headers: false sends no rate-limit headers, on successes and on 429s", async () => {
    const s = await standin({ headers: false, rpm: 60, burst: { requests: 1 } });
    const ok = await post(s, "/v1/chat/completions", chatBody(), oaHeaders());
    const refused = await post(s, "/v1/messages", messagesBody(), anHeaders("sk-test-openai"));
    expect(ok.status).toBe(200);
    expect(refused.status).toBe(429);
    for (const r of [ok, refused]) {
      expect([...r.headers.keys()].filter((k) => k.includes("ratelimit"))).toEqual([]);
    }
    expect(ok.headers.get("x-request-id")).toBeTruthy();
  });
});

describe("stand-in: token buckets", () => {
  it("Gemini's TPM counts input alone: a short prompt asking for much output is taken, a long prompt is refused", async () => {
    const s = await standin({ rpm: 600, tpm: 1_000, burst: 1 });
    const ask = (text: string) => post(s, "/v1beta/models/gemini-2.5-flash:generateContent", { contents: [{ parts: [{ text }] }], generationConfig: { maxOutputTokens: 5_000 } }, { "x-goog-api-key": "g-input" });
    expect((await ask("short")).status).toBe(200);
    expect((await ask("x".repeat(4_400))).status).toBe(429);
    // OpenAI counts the output allowance too: the same short prompt is refused there.
    const openai = await post(s, "/v1/chat/completions", chatBody({ max_tokens: 5_000 }), oaHeaders());
    expect(openai.status).toBe(429);
  });

  it("RPM: refuses past the burst with rate_limit_exceeded and an exact retry-after, then refills", async () => {
    // One token a second: wide enough that a loaded machine's slow calls do not eat the wait.
    const s = await standin({ rpm: 60, burst: { requests: 2 }, retryAfter: "ms" });
    const client = openaiClient(s);
    await client.chat.completions.create(chatBody());
    await client.chat.completions.create(chatBody());
    const e = await caught(client.chat.completions.create(chatBody()), OpenAI.RateLimitError);
    expect(e.status).toBe(429);
    expect(e.code).toBe("rate_limit_exceeded");
    expect(e.type).toBe("requests");
    expect(e.message).toMatch(/on requests per min \(RPM\): Limit 60, Used \d+, Requested 1\. Please try again in \d+ms\./);
    expect(e.headers?.get("retry-after")).toBe("1");
    const waitMs = Number(e.headers?.get("retry-after-ms"));
    expect(waitMs).toBeGreaterThan(500);
    expect(waitMs).toBeLessThanOrEqual(1_000);
    await sleep(waitMs + 5);
    await expect(client.chat.completions.create(chatBody())).resolves.toBeTruthy();
    expect(s.stats()).toMatchObject({ successes: 3, rateLimited: 1, rateLimitedBy: { requests: 1 } });
  });

  it("buckets are per credential and shared across both providers' paths", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 } });
    expect((await post(s, "/v1/chat/completions", chatBody(), oaHeaders("k1"))).status).toBe(200);
    expect((await post(s, "/v1/messages", messagesBody(), anHeaders("k1"))).status).toBe(429);
    expect((await post(s, "/v1/chat/completions", chatBody(), oaHeaders("k2"))).status).toBe(200);
  });

  it("Anthropic 429: rate_limit_error body and retry-after", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 } });
    const client = anthropicClient(s);
    await client.messages.create(messagesBody());
    const e = await caught(client.messages.create(messagesBody()), Anthropic.RateLimitError);
    expect(e.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(e.headers?.get("retry-after")).toBe("1");
    expect(e.headers?.get("anthropic-ratelimit-requests-remaining")).toBe("0");
  });

  it("TPM counts prompt chars/4 plus max tokens; a request larger than the bucket is 'too large'", async () => {
    const s = await standin({ tpm: 1000, rpm: 0 });
    const prompt = "x".repeat(400); // 100 tokens
    const body = (max: number) => chatBody({ messages: [{ role: "user", content: prompt }], max_tokens: max });
    const ok = await post(s, "/v1/chat/completions", body(500), oaHeaders());
    expect(ok.headers.get("x-ratelimit-remaining-tokens")).toBe("400");
    const refused = await post(s, "/v1/chat/completions", body(500), oaHeaders());
    const err = ((await refused.json()) as { error: { type: string; message: string } }).error;
    expect(refused.status).toBe(429);
    expect(err.type).toBe("tokens");
    expect(err.message).toMatch(/tokens per min \(TPM\): Limit 1000, Used \d+, Requested 600/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(12); // 200 tokens at 1000/min
    const huge = await post(s, "/v1/chat/completions", body(5000), oaHeaders("other"));
    expect(huge.status).toBe(429);
    expect(((await huge.json()) as { error: { message: string } }).error.message).toMatch(/^Request too large/);
    expect(huge.headers.get("retry-after")).toBeNull();
  });

  it("retry-after modes: absent, long, date", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 }, retryAfter: "absent" });
    await post(s, "/v1/chat/completions", chatBody(), oaHeaders());
    const get = async () => (await post(s, "/v1/chat/completions", chatBody(), oaHeaders())).headers.get("retry-after");
    expect(await get()).toBeNull();
    s.configure({ retryAfter: "long", longRetryAfterSec: 3600 });
    expect(await get()).toBe("3600");
    s.configure({ retryAfter: "date" });
    const at = Date.parse((await get())!);
    expect(at - Date.now()).toBeGreaterThan(0);
    expect(at - Date.now()).toBeLessThanOrEqual(2000);
  });
});

describe("stand-in: concurrency cap, quota, auth", () => {
  it("answers 429 beyond maxConcurrent in flight, per credential", async () => {
    const s = await standin({ maxConcurrent: 2, latencyMs: 150 });
    const all = await Promise.all([
      ...[1, 2, 3, 4].map(() => post(s, "/v1/chat/completions", chatBody(), oaHeaders("busy"))),
      post(s, "/v1/messages", messagesBody(), anHeaders("quiet")),
    ]);
    expect(all.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429]);
    const refused = all.find((r) => r.status === 429)!;
    expect(await refused.json()).toMatchObject({ error: { code: "rate_limit_exceeded" } });
    const st = s.stats();
    expect(st.peakInFlight).toBe(3);
    expect(st.inFlight).toBe(0);
    expect(st.rateLimitedBy.concurrency).toBe(2);
  });

  it("quotaExhaustedKeys: OpenAI insufficient_quota 429, Anthropic credit balance 400", async () => {
    const s = await standin({ quotaExhaustedKeys: ["broke"] });
    const e = await caught(openaiClient(s, "broke").chat.completions.create(chatBody()), OpenAI.RateLimitError);
    expect(e.code).toBe("insufficient_quota");
    expect(e.type).toBe("insufficient_quota");
    expect(e.message).toMatch(/You exceeded your current quota/);
    const a = await caught(anthropicClient(s, "broke").messages.create(messagesBody()), Anthropic.BadRequestError);
    expect(a.error).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/credit balance is too low/) } });
    expect(s.stats()).toMatchObject({ quotaErrors: 2, successes: 0, rateLimited: 0 });
  });

  it("missing or unknown credential: 401 in each provider's shape", async () => {
    const s = await standin({ apiKeys: ["good"] });
    const none = await post(s, "/v1/chat/completions", chatBody(), {});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/^You didn't provide an API key/) } });
    const e = await caught(openaiClient(s, "sk-wrong-key-123").chat.completions.create(chatBody()), OpenAI.AuthenticationError);
    expect(e.code).toBe("invalid_api_key");
    const anon = await post(s, "/v1/messages", messagesBody(), { "anthropic-version": "2023-06-01" });
    expect(await anon.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    await expect(anthropicClient(s, "good").messages.create(messagesBody())).resolves.toBeTruthy();
    expect(s.stats()).toMatchObject({ unauthorized: 3, successes: 1 });
  });
});
