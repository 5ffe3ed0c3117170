// The stand-in's provider dialects beyond OpenAI and Anthropic, each through the client its users
// have: the official openai SDK on every OpenAI-style route (AzureOpenAI for Azure's), plain fetch
// on Gemini's native API. Each provider behind the path prefix a gateway's base URL gives it.
import OpenAI, { AzureOpenAI } from "openai";
import { describe, expect, it } from "vitest";
import { directBase, OPENAI_SDK_PATHS } from "../support/standin/index.ts";
import type { OpenAiStyle, Standin } from "../support/standin/index.ts";
import { post, standin } from "./standin-helpers.ts";

const sdk = (s: Standin, provider: OpenAiStyle, apiKey = `key-${provider}`) => new OpenAI({ apiKey, baseURL: directBase(s.url, provider), maxRetries: 0 });
const USER = [{ role: "user" as const, content: "Count these words for the stand-in please" }];
const MODEL: Record<OpenAiStyle, string> = {
  openai: "gpt-4o-mini", groq: "llama-3.3-70b-versatile", mistral: "mistral-small-latest", openrouter: "meta-llama/llama-3.3-70b-instruct:free",
  deepseek: "deepseek-chat", together: "meta-llama/Llama-3.3-70B-Instruct-Turbo", fireworks: "accounts/fireworks/models/llama-v3p3-70b-instruct",
  xai: "grok-4", gemini: "gemini-2.5-flash",
};
const failure = (p: PromiseLike<unknown>) => Promise.resolve(p).then(() => expect.fail("expected the call to fail"), (e: unknown) => e as InstanceType<typeof OpenAI.APIError>);

describe("stand-in dialects: usage as each reports it", () => {
  // Whether a stream reports usage unasked: Groq (x_groq), OpenRouter, Mistral, Together and Fireworks do; the rest when asked.
  const UNASKED: Record<Exclude<OpenAiStyle, "openai">, "x_groq" | "usage" | null> = {
    groq: "x_groq", openrouter: "usage", mistral: "usage", deepseek: null, together: "usage", fireworks: "usage", xai: null, gemini: null,
  };
  for (const [provider, unasked] of Object.entries(UNASKED) as [Exclude<OpenAiStyle, "openai">, (typeof UNASKED)[keyof typeof UNASKED]][]) {
    it(`${provider}: plain and streamed, what the answers report is what the stand-in counts as served`, async () => {
      const s = await standin({ outputTokens: 7, streamChunks: 3 });
      const client = sdk(s, provider);
      const model = MODEL[provider];
      const plain = await client.chat.completions.create({ model, messages: USER });
      let seen = { input: plain.usage!.prompt_tokens, output: plain.usage!.completion_tokens };
      expect(plain.choices[0]!.message.content!.split(" ")).toHaveLength(7);
      let unaskedUsage: OpenAI.CompletionUsage | null = null;
      let text = "";
      for await (const c of await client.chat.completions.create({ model, messages: USER, stream: true })) {
        text += c.choices[0]?.delta.content ?? "";
        const x = (c as unknown as { x_groq?: { usage?: OpenAI.CompletionUsage } }).x_groq?.usage;
        unaskedUsage ??= x ?? c.usage ?? null;
      }
      expect(text.split(" ")).toHaveLength(7);
      expect(unaskedUsage === null ? null : unasked).toBe(unasked);
      if (unaskedUsage) seen = { input: seen.input + unaskedUsage.prompt_tokens, output: seen.output + unaskedUsage.completion_tokens };
      let asked: OpenAI.CompletionUsage | null = null;
      for await (const c of await client.chat.completions.create({ model, messages: USER, stream: true, stream_options: { include_usage: true } }))
        if (c.usage) asked = c.usage;
      expect(asked).toMatchObject({ completion_tokens: 7 });
      seen = { input: seen.input + asked!.prompt_tokens, output: seen.output + asked!.completion_tokens };
      expect(s.stats().usage).toEqual(seen);
      expect(s.stats().log.map((a) => a.provider)).toEqual(Array(3).fill(provider === "gemini" ? "gemini-openai" : provider));
    });
  }
});

describe("stand-in dialects: limits and refusals", () => {
  it("Groq: requests per day and tokens per minute in its headers, Go-duration resets; the day's cap refused as RPD", async () => {
    const s = await standin({ rpd: 3, tpm: 6_000, rpm: 30 });
    const client = sdk(s, "groq");
    const { response } = await client.chat.completions.create({ model: MODEL.groq, messages: USER, max_tokens: 10 }).withResponse();
    const h = response.headers;
    expect([h.get("x-ratelimit-limit-requests"), h.get("x-ratelimit-remaining-requests"), h.get("x-ratelimit-limit-tokens")]).toEqual(["3", "2", "6000"]);
    // A day's bucket of 3 refills one request in 8 h: a Go duration with hours.
    expect(h.get("x-ratelimit-reset-requests")).toMatch(/^\d+h\d+m[\d.]+s$/);
    expect(h.get("x-ratelimit-reset-tokens")).toMatch(/^[\d.]+(ms|s)$/);
    await client.chat.completions.create({ model: MODEL.groq, messages: USER, max_tokens: 10 });
    await client.chat.completions.create({ model: MODEL.groq, messages: USER, max_tokens: 10 });
    const e = await failure(client.chat.completions.create({ model: MODEL.groq, messages: USER, max_tokens: 10 }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.error).toMatchObject({ type: "requests", code: "rate_limit_exceeded", message: expect.stringMatching(/on requests per day \(RPD\): Limit 3, Used 3, Requested 1\. Please try again in \d+h/) });
    expect(s.stats().rateLimitedBy.dayRequests).toBe(1);
    // Limits hold per model: another model of the same organization has its own day.
    await expect(client.chat.completions.create({ model: "llama-3.1-8b-instant", messages: USER, max_tokens: 10 })).resolves.toBeTruthy();
  });

  it("Groq: a request above its tokens per minute is a 413, type tokens, code rate_limit_exceeded, with no retry-after; one that fits goes", async () => {
    const s = await standin({ tpm: 6_000 });
    const client = sdk(s, "groq");
    const e = await failure(client.chat.completions.create({ model: MODEL.groq, messages: USER, max_tokens: 9_000 }));
    expect(e.status).toBe(413);
    expect(e.error).toMatchObject({ type: "tokens", code: "rate_limit_exceeded", message: expect.stringMatching(/^Request too large for model `llama-3\.3-70b-versatile` in organization `[^`]+` service tier `on_demand` on tokens per minute \(TPM\): Limit 6000, Requested \d+, please reduce your message size and try again\./) });
    expect(e.headers?.get("retry-after")).toBeNull();
    await expect(client.chat.completions.create({ model: MODEL.groq, messages: USER, max_tokens: 10 })).resolves.toBeTruthy();
  });

  it("Groq flex: 498 capacity_exceeded for flex-tier requests only, at once", async () => {
    const s = await standin({ faults: { "498": 1 }, latencyMs: 1_000 });
    const client = sdk(s, "groq");
    const t = Date.now();
    const e = await failure(client.chat.completions.create({ model: MODEL.groq, messages: USER, service_tier: "flex" } as OpenAI.ChatCompletionCreateParamsNonStreaming));
    expect(Date.now() - t).toBeLessThan(700); // not after the answer's second
    expect(e.status).toBe(498);
    expect(e.error).toMatchObject({ code: "capacity_exceeded" });
    await expect(client.chat.completions.create({ model: MODEL.groq, messages: USER })).resolves.toBeTruthy();
    expect(s.stats().faults).toEqual({ "498": 1 });
  });

  it("xAI: spent credits are a 429 with a string error, a bad key a 400; no rate-limit headers; RPS as a second's bucket", async () => {
    const s = await standin({ quotaExhaustedKeys: ["xai-spent"], apiKeys: ["xai-spent", "xai-ok"], rpm: 120, burst: 1 / 60 });
    const spent = await failure(sdk(s, "xai", "xai-spent").chat.completions.create({ model: MODEL.xai, messages: USER }));
    expect(spent).toBeInstanceOf(OpenAI.RateLimitError);
    expect(spent.error).toMatch(/^Your team \S+ has either used all available credits or reached its monthly spending limit\./);
    expect(spent.message).toMatch(/^429 "Your team/); // as the SDK words a string error: what users paste into issues
    const bad = await failure(sdk(s, "xai", "xai-wrong").chat.completions.create({ model: MODEL.xai, messages: USER }));
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.error).toMatch(/^Incorrect API key provided/);
    const ok = sdk(s, "xai", "xai-ok");
    const { response } = await ok.chat.completions.create({ model: MODEL.xai, messages: USER }).withResponse();
    expect([...response.headers.keys()].filter((k) => k.includes("ratelimit"))).toEqual([]);
    await ok.chat.completions.create({ model: MODEL.xai, messages: USER });
    expect(await failure(ok.chat.completions.create({ model: MODEL.xai, messages: USER }))).toBeInstanceOf(OpenAI.RateLimitError);
    expect(s.stats()).toMatchObject({ quotaErrors: 1, unauthorized: 1, successes: 2, rateLimited: 1 });
  });

  it("DeepSeek: 402 Insufficient Balance; a held plain answer sends its headers at once, then blank lines, then the JSON the SDK reads", async () => {
    const s = await standin({ quotaExhaustedKeys: ["ds-broke"], heldMs: 800, keepAliveMs: 100, latencyMs: 10 });
    const broke = await failure(sdk(s, "deepseek", "ds-broke").chat.completions.create({ model: MODEL.deepseek, messages: USER }));
    expect(broke.status).toBe(402);
    expect(broke.error).toEqual({ message: "Insufficient Balance", type: "unknown_error", param: null, code: "invalid_request_error" });
    const t = Date.now();
    const res = await post(s, "/deepseek/chat/completions", { model: MODEL.deepseek, messages: USER }, { authorization: "Bearer ds-ok" });
    const headersAfter = Date.now() - t;
    const body = await res.text();
    expect(headersAfter).toBeLessThan(500);
    expect(Date.now() - t).toBeGreaterThanOrEqual(800);
    expect(res.headers.get("content-length")).toBeNull();
    expect(body).toMatch(/^\n{5,}\{"id":"chatcmpl-/);
    expect(JSON.parse(body).usage).toMatchObject({ prompt_cache_miss_tokens: expect.any(Number) });
    const parsed = await sdk(s, "deepseek", "ds-ok").chat.completions.create({ model: MODEL.deepseek, messages: USER });
    expect(parsed.object).toBe("chat.completion");
    const stream = await post(s, "/deepseek/chat/completions", { model: MODEL.deepseek, messages: USER, stream: true }, { authorization: "Bearer ds-ok" });
    const events = await stream.text();
    expect(events).toMatch(/^(: keep-alive\n\n){3,}data: /);
  });

  it("OpenRouter: 402 for credits; a daily cap's 429 tells its limit in error.metadata.headers with an epoch-ms reset", async () => {
    const s = await standin({ quotaExhaustedKeys: ["or-broke"], rpd: 2 });
    const broke = await failure(sdk(s, "openrouter", "or-broke").chat.completions.create({ model: MODEL.openrouter, messages: USER }));
    expect(broke.status).toBe(402);
    expect(broke.error).toEqual({ code: 402, message: "Insufficient credits. Add more using https://openrouter.ai/settings/credits" });
    const client = sdk(s, "openrouter", "or-free");
    await client.chat.completions.create({ model: MODEL.openrouter, messages: USER });
    await client.chat.completions.create({ model: MODEL.openrouter, messages: USER });
    const cap = await failure(client.chat.completions.create({ model: MODEL.openrouter, messages: USER }));
    expect(cap.status).toBe(429);
    const meta = (cap.error as { metadata: { headers: Record<string, string> } }).metadata.headers;
    expect(cap.error).toMatchObject({ code: 429, message: expect.stringMatching(/^Rate limit exceeded: free-models-per-day/) });
    expect(meta).toMatchObject({ "X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0" });
    expect(Number(meta["X-RateLimit-Reset"])).toBeGreaterThan(Date.now() + 3_600_000);
    expect([cap.headers?.get("x-ratelimit-limit"), cap.headers?.get("retry-after")]).toEqual([null, null]); // only the body says it
  });

  it("Together: per-second x-ratelimit-* headers; 429 dynamic_request_limited above the rate, its 503 below it", async () => {
    const s = await standin({ rpm: 180, burst: 1 / 60 });
    const client = sdk(s, "together");
    const { response } = await client.chat.completions.create({ model: MODEL.together, messages: USER }).withResponse();
    expect([response.headers.get("x-ratelimit-limit"), response.headers.get("x-ratelimit-remaining"), response.headers.get("x-ratelimit-reset")]).toEqual(["3", "2", "1"]);
    await client.chat.completions.create({ model: MODEL.together, messages: USER });
    await client.chat.completions.create({ model: MODEL.together, messages: USER });
    const limited = await failure(client.chat.completions.create({ model: MODEL.together, messages: USER }));
    expect(limited.status).toBe(429);
    expect(limited.error).toMatchObject({ type: "dynamic_request_limited" });
    s.configure({ rpm: 0, faults: { "503": 1 } });
    const overloaded = await failure(client.chat.completions.create({ model: MODEL.together, messages: USER }));
    expect(overloaded.status).toBe(503);
  });

  it("Mistral: tokens by size per minute and per month; the month's cap is a 429 with the month's remaining at 0", async () => {
    const s = await standin({ tpm: 50_000, monthlyTokens: 100 });
    const client = sdk(s, "mistral");
    const { response } = await client.chat.completions.create({ model: MODEL.mistral, messages: USER, max_tokens: 30 }).withResponse();
    const h = response.headers;
    expect(h.get("ratelimitbysize-limit")).toBe("50000");
    expect(h.get("x-ratelimitbysize-limit-month")).toBe("100");
    const used = 100 - Number(h.get("x-ratelimitbysize-remaining-month"));
    expect(used).toBeGreaterThan(30);
    expect(h.get("ratelimitbysize-reset")).toMatch(/^\d+$/);
    expect([...h.keys()].filter((k) => /requests/.test(k))).toEqual([]);
    const cap = await failure(client.chat.completions.create({ model: MODEL.mistral, messages: USER, max_tokens: 90 }));
    expect(cap.status).toBe(429);
    expect(cap.headers?.get("x-ratelimitbysize-remaining-month")).toBe(String(100 - used));
    expect(s.stats().rateLimitedBy.monthTokens).toBe(1);
  });

  it("Fireworks: prompt and generated tokens per second in its headers, over-limit, a 402 for its monthly budget", async () => {
    const s = await standin({ itpm: 600_000, otpm: 60_000, tpm: 0, quotaExhaustedKeys: ["fw-budget"] });
    const { response } = await sdk(s, "fireworks").chat.completions.create({ model: MODEL.fireworks, messages: USER, max_tokens: 20 }).withResponse();
    const h = response.headers;
    expect([h.get("x-ratelimit-limit-tokens-prompt"), h.get("x-ratelimit-limit-tokens-generated"), h.get("x-ratelimit-over-limit")]).toEqual(["10000", "1000", "no"]);
    expect(Number(h.get("x-ratelimit-remaining-tokens-generated"))).toBe(60_000 - 20);
    const budget = await failure(sdk(s, "fireworks", "fw-budget").chat.completions.create({ model: MODEL.fireworks, messages: USER }));
    expect(budget.status).toBe(402);
  });
});

describe("stand-in dialects: Azure exact", () => {
  const azure = (s: Standin, apiVersion: string, deployment = "mini-dep", resource = "myres", apiKey = "az-key") =>
    new AzureOpenAI({ endpoint: `${s.url}/azure/${resource}`, apiKey, apiVersion, deployment, maxRetries: 0 });

  it("an api-version older than 2024-09-01-preview refuses stream_options with a 400; newer ones stream usage", async () => {
    const s = await standin({ outputTokens: 5 });
    const old = azure(s, "2024-02-01");
    const e = await failure(old.chat.completions.create({ model: "x", messages: USER, stream: true, stream_options: { include_usage: true } }));
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect(e.error).toEqual({ message: "Unrecognized request argument supplied: stream_options", type: "invalid_request_error", param: null, code: null });
    let text = "";
    for await (const c of await old.chat.completions.create({ model: "x", messages: USER, stream: true })) text += c.choices[0]?.delta.content ?? "";
    expect(text.split(" ")).toHaveLength(5);
    for (const v of ["2024-08-01-preview", "2024-06-01"]) expect((await failure(azure(s, v).chat.completions.create({ model: "x", messages: USER, stream: true, stream_options: { include_usage: true } }))).status).toBe(400);
    for (const v of ["2024-09-01-preview", "2024-10-21", "2025-04-01-preview"]) {
      let usage = null;
      for await (const c of await azure(s, v).chat.completions.create({ model: "x", messages: USER, stream: true, stream_options: { include_usage: true } })) usage ??= c.usage;
      expect(usage).toMatchObject({ completion_tokens: 5 });
    }
    // The stand-in counted the streams that reported usage: the three new ones only.
    expect(s.stats().usage.output).toBe(15);
  });

  it("limits per resource and deployment, remaining-only headers, retry-after and retry-after-ms on a 429", async () => {
    const s = await standin({ rpm: 120, burst: 1 / 60 }); // 2 a second, counted over 1 s
    const a = azure(s, "2024-10-21");
    const { response } = await a.chat.completions.create({ model: "x", messages: USER }).withResponse();
    expect([...response.headers.keys()].filter((k) => k.includes("ratelimit")).sort()).toEqual(["x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens"]);
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("1");
    await a.chat.completions.create({ model: "x", messages: USER });
    const e = await failure(a.chat.completions.create({ model: "x", messages: USER }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(e.headers?.get("retry-after")).toBe("1");
    expect(Number(e.headers?.get("retry-after-ms"))).toBeGreaterThan(0);
    expect(Number(e.headers?.get("retry-after-ms"))).toBeLessThanOrEqual(500);
    // Same key, another deployment, another resource: buckets of their own.
    await expect(azure(s, "2024-10-21", "other-dep").chat.completions.create({ model: "x", messages: USER })).resolves.toBeTruthy();
    await expect(azure(s, "2024-10-21", "mini-dep", "otherres").chat.completions.create({ model: "x", messages: USER })).resolves.toBeTruthy();
    // The v1 surface names the deployment in the body; no api-version needed.
    const v1 = new OpenAI({ apiKey: "az-key", baseURL: `${s.url}/azure/myres/openai/v1`, maxRetries: 0, defaultHeaders: { "api-key": "az-key" } });
    const viaV1 = await failure(v1.chat.completions.create({ model: "mini-dep", messages: USER }));
    expect(viaV1.status).toBe(429); // the same deployment's bucket
    expect((await v1.chat.completions.create({ model: "third-dep", messages: USER })).model).toBe("third-dep");
    expect(s.stats().log.filter((x) => x.provider !== "azure")).toEqual([]);
  });
});

describe("stand-in dialects: Gemini", () => {
  const native = (s: Standin, model: string, verb: string, body: unknown, auth: Record<string, string> = { "x-goog-api-key": "g-key" }, query = "") =>
    fetch(`${s.url}/gemini/v1beta/models/${model}:${verb}${query}`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify(body) });
  const ask = (text = "Count these words for the stand-in please", max?: number) => ({ contents: [{ role: "user", parts: [{ text }] }], ...(max ? { generationConfig: { maxOutputTokens: max } } : {}) });

  it("generateContent and streamGenerateContent: usageMetadata (the stream's counts so far in each chunk, CRLF events), no rate-limit headers", async () => {
    const s = await standin({ outputTokens: 6, streamChunks: 3, rpm: 600 });
    const res = await native(s, "gemini-2.5-flash", "generateContent", ask());
    expect(res.status).toBe(200);
    expect([...res.headers.keys()].filter((k) => /ratelimit|retry/.test(k))).toEqual([]);
    const json = (await res.json()) as { candidates: { content: { parts: { text: string }[] }; finishReason: string }[]; usageMetadata: Record<string, number> };
    expect(json.candidates[0]!.finishReason).toBe("STOP");
    expect(json.usageMetadata).toMatchObject({ promptTokenCount: expect.any(Number), candidatesTokenCount: 6 });
    const stream = await native(s, "gemini-2.5-flash", "streamGenerateContent", ask(), { "x-goog-api-key": "g-key" }, "?alt=sse");
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const raw = await stream.text();
    expect(raw.endsWith("\r\n\r\n")).toBe(true);
    const chunks = raw.split("\r\n\r\n").filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, "")) as typeof json);
    expect(chunks.map((c) => c.usageMetadata.candidatesTokenCount)).toEqual([2, 4, 6]);
    expect(chunks.at(-1)!.candidates[0]!.finishReason).toBe("STOP");
    // Without alt=sse: one JSON array of the chunks. The key may come in ?key=.
    const array = await native(s, "gemini-2.5-flash", "streamGenerateContent", ask(), {}, "?key=g-key");
    expect(((await array.json()) as unknown[]).length).toBe(3);
    expect(s.stats().usage.output).toBe(18);
    expect(s.stats().log.map((a) => [a.provider, a.model, a.stream, a.credential])).toEqual([
      ["gemini", "gemini-2.5-flash", false, "g-key"], ["gemini", "gemini-2.5-flash", true, "g-key"], ["gemini", "gemini-2.5-flash", true, "g-key"],
    ]);
  });

  it("429 RESOURCE_EXHAUSTED with QuotaFailure and RetryInfo: per minute, per day (a short retryDelay all the same), per model; a key out of quota", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 }, rpd: 2, quotaExhaustedKeys: ["g-spent"] });
    expect((await native(s, "gemini-2.5-flash", "generateContent", ask())).status).toBe(200);
    const minute = await native(s, "gemini-2.5-flash", "generateContent", ask());
    expect(minute.status).toBe(429);
    expect(minute.headers.get("retry-after")).toBeNull();
    const body = (await minute.json()) as { error: { code: number; status: string; message: string; details: Record<string, unknown>[] } };
    expect(body.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED", message: expect.stringMatching(/^You exceeded your current quota/) });
    const byType = Object.fromEntries(body.error.details.map((d) => [String(d["@type"]).split(".").at(-1), d]));
    expect(byType.QuotaFailure).toMatchObject({ violations: [{ quotaId: "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", quotaValue: "60", quotaDimensions: { model: "gemini-2.5-flash" } }] });
    expect(byType.RetryInfo!.retryDelay).toMatch(/^(0\.\d+|1)s$/);
    // Another model: its own minute and its own day.
    expect((await native(s, "gemini-2.5-pro", "generateContent", ask())).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_050));
    expect((await native(s, "gemini-2.5-pro", "generateContent", ask())).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_050));
    const day = (await (await native(s, "gemini-2.5-pro", "generateContent", ask())).json()) as typeof body;
    const dayDetails = Object.fromEntries(day.error.details.map((d) => [String(d["@type"]).split(".").at(-1), d]));
    expect(dayDetails.QuotaFailure).toMatchObject({ violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier", quotaValue: "2" }] });
    expect(dayDetails.RetryInfo!.retryDelay).toBe("59s");
    const spent = (await (await native(s, "gemini-2.5-flash", "generateContent", ask(), { "x-goog-api-key": "g-spent" })).json()) as typeof body;
    expect(JSON.stringify(spent)).toContain("PerDay");
    expect(s.stats()).toMatchObject({ quotaErrors: 1, rateLimitedBy: { requests: 1, dayRequests: 1 } });
  });

  it("the OpenAI-compatible route: the model in the body, the same quotas as the native route, errors wrapped in an array", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 }, apiKeys: ["g-key"] });
    const client = sdk(s, "gemini", "g-key");
    const ok = await client.chat.completions.create({ model: "gemini-2.5-flash", messages: USER });
    expect(ok.usage).toMatchObject({ completion_tokens: 12 });
    // The native route shares the project's per-model minute.
    const native429 = await native(s, "gemini-2.5-flash", "generateContent", ask());
    expect(native429.status).toBe(429);
    const e = await failure(client.chat.completions.create({ model: "gemini-2.5-flash", messages: USER }));
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    const res = await post(s, `/gemini${OPENAI_SDK_PATHS.gemini}/chat/completions`, { model: "gemini-2.5-flash", messages: USER }, { authorization: "Bearer g-key" });
    const body = (await res.json()) as [{ error: { status: string; details: unknown[] } }];
    expect(Array.isArray(body)).toBe(true);
    expect(body[0].error).toMatchObject({ status: "RESOURCE_EXHAUSTED", details: expect.any(Array) });
    const bad = await post(s, `/gemini${OPENAI_SDK_PATHS.gemini}/chat/completions`, { model: "gemini-2.5-flash", messages: USER }, { authorization: "Bearer wrong" });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("API_KEY_INVALID");
  });
});
