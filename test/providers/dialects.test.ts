// The dialect rows read from each provider's documented answers: limit headers with their periods,
// wait hints, refusal bodies by meaning, usage, streamed usage asked for, the key's scope. Each
// fixture cites where its shape comes from; "third-party" where only a client or a bug report says so.
import { describe, expect, it } from "vitest";
import { keyUnusable, refusal } from "../../src/policy/classify";
import { parseRateLimitHeaders } from "../../src/policy/limits";
import { DAY_MS, MINUTE_MS, MONTH_MS, SECOND_MS } from "../../src/providers/dialect";
import { DIALECTS } from "../../src/providers/dialects";
import { keyFor, requestModel } from "../../src/providers/key";
import { providers } from "../../src/providers/registry";
import { askForUsage } from "../../src/usage/meter";
import { tapStream } from "../../src/usage/stream";
import { usageIn } from "../../src/usage/tokens";

const NOW = Date.UTC(2026, 10, 22, 8, 0, 0);
const parse = (name: keyof typeof DIALECTS, h: Record<string, string>, body?: unknown) => parseRateLimitHeaders(new Headers(h), NOW, DIALECTS[name], body);
const meaning = (name: keyof typeof DIALECTS, status: number, body: unknown, h: Record<string, string> = {}) =>
  refusal(status, body, DIALECTS[name], parseRateLimitHeaders(new Headers(h), NOW, DIALECTS[name], body));
const table = providers("{}");

describe("limits, as each dialect tells them", () => {
  it("groq: requests per DAY, tokens per minute, Go-duration resets (console.groq.com/docs/rate-limits)", () => {
    const info = parse("groq", {
      "x-ratelimit-limit-requests": "14400", "x-ratelimit-limit-tokens": "18000",
      "x-ratelimit-remaining-requests": "14370", "x-ratelimit-remaining-tokens": "17997",
      "x-ratelimit-reset-requests": "2m59.56s", "x-ratelimit-reset-tokens": "7.66s",
    });
    expect(info.requests).toEqual({ limit: 14400, remaining: 14370, resetAt: NOW + 179_560, periodMs: DAY_MS });
    // Groq refuses one request above its tokens limit outright (a 413): the window says so.
    expect(info.tokens).toEqual({ limit: 18000, remaining: 17997, resetAt: NOW + 7660, periodMs: MINUTE_MS, refusesLarger: true });
  });

  it("groq: a 429's retry-after, else the message's \"Please try again in 7.66s.\" (docs/errors)", () => {
    const body = { error: { message: "Rate limit reached for model `llama-3.1-8b-instant` in organization `org_01` on tokens per minute (TPM): Limit 6000, Used 5713, Requested 2062. Please try again in 17.75s. Visit https://console.groq.com/docs/rate-limits for more information.", type: "tokens", code: "rate_limit_exceeded" } };
    expect(parse("groq", { "retry-after": "2" }, body).retryAfterMs).toBe(2000);
    expect(parse("groq", {}, body).retryAfterMs).toBe(17_750);
    expect(parse("openai", {}, body).retryAfterMs).toBeNull(); // OpenAI's row reads no message
  });

  it("together: per-SECOND windows, reset in seconds (docs.together.ai/docs/rate-limits, older page)", () => {
    const info = parse("together", { "x-ratelimit-limit": "10", "x-ratelimit-remaining": "9", "x-ratelimit-reset": "1", "x-ratelimit-limit-tokens": "2000", "x-ratelimit-remaining-tokens": "1500" });
    expect(info.requests).toEqual({ limit: 10, remaining: 9, resetAt: NOW + 1000, periodMs: SECOND_MS });
    expect(info.tokens).toEqual({ limit: 2000, remaining: 1500, resetAt: null, periodMs: SECOND_MS });
  });

  it("mistral: by-size tokens per minute and per month, the tighter by what is left (third-party clients' header names)", () => {
    const h = {
      "x-ratelimitbysize-limit-minute": "500000", "x-ratelimitbysize-remaining-minute": "467993", "ratelimitbysize-reset": "40",
      "x-ratelimitbysize-limit-month": "1000000000", "x-ratelimitbysize-remaining-month": "900000000",
    };
    expect(parse("mistral", h).tokens).toEqual({ limit: 500_000, remaining: 467_993, resetAt: NOW + 40_000, periodMs: MINUTE_MS });
    expect(parse("mistral", { ...h, "x-ratelimitbysize-remaining-month": "1000" }).tokens).toEqual({ limit: 1e9, remaining: 1000, resetAt: null, periodMs: MONTH_MS, cap: true });
    expect(parse("mistral", { "ratelimitbysize-limit": "500000", "ratelimitbysize-remaining": "12", "ratelimitbysize-reset": "3" }).tokens)
      .toEqual({ limit: 500_000, remaining: 12, resetAt: NOW + 3000, periodMs: MINUTE_MS });
  });

  it("fireworks: prompt and generated tokens per second (its docs: \"described in tokens per second\"), no reset, each its own window", () => {
    const h = { "x-ratelimit-limit-tokens-prompt": "120000", "x-ratelimit-remaining-tokens-prompt": "119900", "x-ratelimit-limit-tokens-generated": "1200", "x-ratelimit-remaining-tokens-generated": "1155" };
    expect(parse("fireworks", h).tokens).toEqual({ limit: 120_000, remaining: 119_900, resetAt: null, periodMs: SECOND_MS });
    expect(parse("fireworks", h).output).toEqual({ limit: 1_200, remaining: 1_155, resetAt: null, periodMs: SECOND_MS });
    // The generated window is never taken for the prompt's (it is charged output alone).
    const generated = parse("fireworks", { "x-ratelimit-limit-tokens-generated": "1200", "x-ratelimit-remaining-tokens-generated": "1155" });
    expect(generated.tokens).toBeNull();
    expect(generated.output).toMatchObject({ limit: 1_200, remaining: 1_155 });
    // A row without that window reads none.
    expect(parse("openai", h).output).toBeUndefined();
  });

  it("anthropic: input and output tokens each a window of its own (ITPM, OTPM); tokens-*, the two together, is not read", () => {
    const h = {
      "anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "38000", "anthropic-ratelimit-input-tokens-reset": "2026-11-22T08:00:03Z",
      "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "1000", "anthropic-ratelimit-output-tokens-reset": "2026-11-22T08:00:45Z",
      "anthropic-ratelimit-tokens-limit": "48000", "anthropic-ratelimit-tokens-remaining": "39000", "anthropic-ratelimit-tokens-reset": "2026-11-22T08:00:03Z",
    };
    const info = parse("anthropic", h);
    expect(info.tokens).toMatchObject({ limit: 40_000, remaining: 38_000, periodMs: MINUTE_MS });
    // The OTPM nearly spent: seen as such, where the combined 39,000 of 48,000 said plenty.
    expect(info.output).toMatchObject({ limit: 8_000, remaining: 1_000, periodMs: MINUTE_MS });
  });

  it("a row whose tokens window leaves prompt-cache reads out (Anthropic's cache-aware ITPM) counts its prompt apart, as its tokens are then charged", () => {
    const free = Object.entries(DIALECTS).filter(([, d]) => d.limits.cacheReadsFree);
    expect(free.map(([name]) => name)).toEqual(["anthropic"]);
    for (const [, d] of free) expect(d.limits.output?.length).toBeGreaterThan(0);
    // The models Anthropic's page marks as counting cache reads too (the Claude 3 family, the safe side) are excepted.
    expect(DIALECTS.anthropic.limits.cacheReadsFree!.except!.test("claude-3-5-haiku-20241022")).toBe(true);
    expect(DIALECTS.anthropic.limits.cacheReadsFree!.except!.test("claude-sonnet-4-5-20250929")).toBe(false);
  });

  it("azure: remaining only, and retry-after-ms on a 429 (learn.microsoft.com/azure/ai-foundry/openai/quotas-limits)", () => {
    const info = parse("azure", { "x-ratelimit-remaining-requests": "99", "x-ratelimit-remaining-tokens": "99000", "retry-after-ms": "1200", "retry-after": "2" });
    expect(info).toEqual({
      retryAfterMs: 1200,
      requests: { limit: null, remaining: 99, resetAt: null, periodMs: MINUTE_MS },
      tokens: { limit: null, remaining: 99_000, resetAt: null, periodMs: MINUTE_MS },
    });
  });

  it("openai reads its own family only; a generic header set is a custom provider's", () => {
    expect(parse("openai", { "x-ratelimit-limit": "20", "x-ratelimit-remaining": "3" }).requests).toBeNull();
    expect(parse("generic", { "x-ratelimit-limit": "20", "x-ratelimit-remaining": "3" }).requests).toMatchObject({ limit: 20, remaining: 3 });
    // Anthropic's reset is a moment, never a duration: a duration there is no reset.
    expect(parse("anthropic", { "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "5", "anthropic-ratelimit-requests-reset": "30s" }).requests)
      .toEqual({ limit: 50, remaining: 5, resetAt: null, periodMs: MINUTE_MS });
  });

  const gemini = (quotaId: string, quotaValue?: string) => ({
    error: {
      code: 429, status: "RESOURCE_EXHAUSTED", message: "You exceeded your current quota, please check your plan and billing details.",
      details: [
        { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", quotaId, quotaDimensions: { model: "gemini-2.0-flash", location: "global" }, ...(quotaValue && { quotaValue }) }] },
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "28s" },
      ],
    },
  });

  it("gemini: no headers; a 429's RetryInfo, and QuotaFailure's period, kind and quotaValue (ai.google.dev/gemini-api/docs/rate-limits; quotaValue as seen in answers)", () => {
    const minute = parse("gemini", {}, gemini("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "15"));
    expect(minute).toEqual({ retryAfterMs: 28_000, requests: null, tokens: null, refused: { kind: "requests", periodMs: MINUTE_MS, limit: 15 } });
    expect(parse("gemini", {}, gemini("GenerateContentInputTokensPerModelPerMinute-FreeTier")).refused).toEqual({ kind: "tokens", periodMs: MINUTE_MS, limit: null });
    expect(parse("gemini", {}, { error: { code: 429, status: "RESOURCE_EXHAUSTED" } }).refused).toEqual({ kind: "requests", periodMs: MINUTE_MS, limit: null });
    // A dialect that tells windows in headers learns from them, never from a refusal's body.
    expect(parse("openai", {}, gemini("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "15")).refused).toBeUndefined();
  });

  it("vertex and bedrock: a 429 names the quota it hit in its message alone, and the key learns that window (partner-models/claude/quotas; repost.aws/knowledge-center/bedrock-throttling-error)", () => {
    const vertex = (metric: string) => ({ error: { code: 429, status: "RESOURCE_EXHAUSTED", message: `Quota exceeded for aiplatform.googleapis.com/${metric} with base model: anthropic-claude-sonnet-4-5. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.` } });
    const refused = (kind: string) => ({ kind, periodMs: MINUTE_MS, limit: null });
    expect(parse("vertex", {}, vertex("online_prediction_output_tokens_per_minute_per_base_model")).refused).toEqual(refused("output"));
    expect(parse("vertex", {}, vertex("global_online_prediction_input_tokens_per_minute_per_base_model")).refused).toEqual(refused("tokens"));
    expect(parse("vertex", {}, vertex("generate_content_input_tokens_per_minute_per_base_model")).refused).toEqual(refused("tokens"));
    expect(parse("vertex", {}, vertex("online_prediction_requests_per_base_model")).refused).toEqual(refused("requests"));
    // The dynamic shared quota names none: a requests window, as before.
    expect(parse("vertex", {}, { error: { code: 429, status: "RESOURCE_EXHAUSTED", message: "Resource exhausted, please try again later." } }).refused).toEqual(refused("requests"));
    // Bedrock's body is a message alone, its type in a header.
    expect(parse("bedrock", {}, { message: "Too many tokens, please wait before trying again." }).refused).toEqual(refused("tokens"));
    expect(parse("bedrock", {}, { message: "Too many requests, please wait before trying again." }).refused).toEqual(refused("requests"));
    expect(parse("bedrock", {}, "").refused).toEqual(refused("requests"));
    // Gemini's QuotaFailure names its quota in its id, before any words.
    expect(parse("vertex", {}, gemini("GenerateContentInputTokensPerModelPerMinute-FreeTier")).refused).toEqual(refused("tokens"));
    // A row that does not read words learns a requests window from the same message.
    expect(parse("xai", {}, { error: { message: "Too many tokens" } }).refused).toMatchObject({ kind: "requests" });
  });

  it("openrouter: a 429's error.metadata.headers, reset in epoch ms; hours away, it is a cap (openrouter.ai/docs/api-reference/limits)", () => {
    const limited = (remaining: string, resetIn: number) => ({
      error: { code: 429, message: "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day", metadata: { headers: { "X-RateLimit-Limit": "50", "X-RateLimit-Remaining": remaining, "X-RateLimit-Reset": String(NOW + resetIn) } } },
    });
    const day = parse("openrouter", {}, limited("0", 5 * 3_600_000));
    expect(day.requests).toEqual({ limit: 50, remaining: 0, resetAt: NOW + 5 * 3_600_000, periodMs: DAY_MS, cap: true });
    expect(day.retryAfterMs).toBe(5 * 3_600_000);
    const minute = parse("openrouter", {}, limited("0", 30_000));
    expect(minute.requests).toEqual({ limit: 50, remaining: 0, resetAt: NOW + 30_000, periodMs: MINUTE_MS });
    expect(minute.retryAfterMs).toBe(30_000);
    expect(meaning("openrouter", 429, limited("0", 5 * 3_600_000))).toEqual({ cls: "hard_quota", evidence: "cap_spent" });
    expect(meaning("openrouter", 429, limited("0", 30_000))).toEqual({ cls: "rate_limit", evidence: null });
  });
});

describe("refusals by meaning, as each dialect documents them", () => {
  const xaiSpent = "Your team 16f2151a-40f4-4a80-8ad0-cae00c27e8dd has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit.";
  it.each<[string, keyof typeof DIALECTS, number, unknown, { cls: string; evidence: string | null }, Record<string, string>?]>([
    // console.groq.com/docs/errors: 498 Flex Tier Capacity Exceeded.
    ["groq 498 flex capacity", "groq", 498, { error: { message: "Flex tier capacity exceeded", type: "capacity_exceeded", code: "capacity_exceeded" } }, { cls: "capacity", evidence: null }],
    // docs.together.ai/docs/error-codes: 503 Engine Overloaded (at or below the dynamic rate).
    ["together 503 overloaded", "together", 503, { error: { message: "The server is overloaded", type: "server_error" } }, { cls: "capacity", evidence: null }],
    ["together 429 above the dynamic rate", "together", 429, { error: { message: "rate limit", type: "rate_limit" } }, { cls: "rate_limit", evidence: null }],
    // api-docs.deepseek.com/quick_start/error_codes: 402 Insufficient Balance, 503 Server Overloaded.
    ["deepseek 402 insufficient balance", "deepseek", 402, { error: { message: "Insufficient Balance", type: "unknown_error", param: null, code: "invalid_request_error" } }, { cls: "hard_quota", evidence: "payment_required" }],
    ["deepseek 503 overloaded", "deepseek", 503, { error: { message: "Server overloaded" } }, { cls: "capacity", evidence: null }],
    // openrouter.ai/docs/api-reference/errors: 402 no credits.
    ["openrouter 402 insufficient credits", "openrouter", 402, { error: { message: "Insufficient credits. Add more using https://openrouter.ai/credits", code: 402 } }, { cls: "hard_quota", evidence: "payment_required" }],
    // xAI: a 429 whose error is a plain string (third-party bug reports, e.g. continuedev/continue#10373).
    ["xai spent credits (429, error a string)", "xai", 429, { code: "Some resource has been exhausted", error: xaiSpent }, { cls: "hard_quota", evidence: "spending_limit" }],
    ["xai spent credits as raw text", "xai", 429, JSON.stringify({ code: "x", error: xaiSpent }), { cls: "hard_quota", evidence: "spending_limit" }],
    ["xai a plain rate limit", "xai", 429, { code: "Some resource has been exhausted", error: "Too many requests" }, { cls: "rate_limit", evidence: null }],
    ["xai bad key (400)", "xai", 400, { code: "Client specified an invalid argument", error: "Incorrect API key provided: xa***Yz. You can obtain an API key from https://console.x.ai." }, { cls: "fatal", evidence: "incorrect_api_key" }],
    // Anthropic: docs.anthropic.com/en/api/errors.
    ["anthropic spend limit", "anthropic", 429, { type: "error", error: { type: "rate_limit_error", message: "x", details: { error_code: "enforced_spend_limit_reached" } } }, { cls: "hard_quota", evidence: "enforced_spend_limit_reached" }],
    ["anthropic 529 overloaded stays transient", "anthropic", 529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, { cls: "transient", evidence: null }],
    ["gemini per-day quota", "gemini", 429, { error: { code: 429, status: "RESOURCE_EXHAUSTED", details: [{ violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }] }] } }, { cls: "hard_quota", evidence: "daily_quota" }],
    ["mistral: a 429 with its month spent", "mistral", 429, { message: "Requests rate limit exceeded" }, { cls: "hard_quota", evidence: "cap_spent" }, { "x-ratelimitbysize-limit-month": "1000000", "x-ratelimitbysize-remaining-month": "0", "x-ratelimitbysize-remaining-minute": "400000" }],
    ["mistral: a 429 with its month left", "mistral", 429, { message: "Requests rate limit exceeded" }, { cls: "rate_limit", evidence: null }, { "x-ratelimitbysize-limit-month": "1000000", "x-ratelimitbysize-remaining-month": "900000", "x-ratelimitbysize-remaining-minute": "0" }],
    ["openai 503 stays transient (not a capacity row)", "openai", 503, { error: { message: "slow down", code: "slow_down" } }, { cls: "transient", evidence: null }],
    ["openai 402 without a code is no evidence", "openai", 402, { error: { message: "Payment required" } }, { cls: "fatal", evidence: null }],
  ])("%s", (_, name, status, body, expected, h) => expect(meaning(name, status, body, h)).toEqual(expected));

  it.each<[string, keyof typeof DIALECTS, number, unknown]>([
    ["the xAI sentence with the caller's words after it", "xai", 429, { error: `${xaiSpent} ignore this` }],
    ["the xAI sentence inside a message object echoing input", "xai", 400, { error: { message: `messages.0: ${xaiSpent}` } }],
    ["the bad-key sentence with more after it", "xai", 400, { error: "Incorrect API key provided: xa***. You can obtain an API key from https://console.x.ai. Also: x" }],
    ["a 402 from a provider that does not use it for balance", "groq", 402, { error: { message: "Insufficient Balance" } }],
    ["a 498 from a provider that does not document it", "openai", 498, { error: { code: "capacity_exceeded" } }],
  ])("no evidence from what a caller could write: %s", (_, name, status, body) => {
    expect(keyUnusable(status, body, DIALECTS[name])).toBeNull();
    expect(refusal(status, body, DIALECTS[name]).cls).not.toBe("hard_quota");
  });
});

describe("usage, where each dialect puts it", () => {
  const groqLast = { id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], x_groq: { id: "req_1", usage: { prompt_tokens: 24, completion_tokens: 377, total_tokens: 401, queue_time: 0.01 } } };

  it("groq: x_groq.usage in a stream's last chunk (console.groq.com/docs/api-reference); other dialects do not look there", async () => {
    expect(usageIn(groqLast, DIALECTS.groq.usage.at)).toEqual({ input: 24, output: 377, cached: 0, cacheWrite: 0 });
    expect(usageIn(groqLast, DIALECTS.openai.usage.at)).toBeNull();
    const text = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "hi" } }] })}\n\ndata: ${JSON.stringify(groqLast)}\n\ndata: [DONE]\n\n`;
    const tap = tapStream(new Response(text).body!, true, false, undefined, DIALECTS.groq.usage.at);
    expect(await new Response(tap.body).text()).toBe(text);
    expect(tap.tokens()).toEqual({ input: 24, output: 377, cached: 0, cacheWrite: 0 });
  });

  it("gemini: usageMetadata on the native route, usage on the OpenAI-compatible one (ai.google.dev/gemini-api/docs/openai)", () => {
    expect(usageIn({ candidates: [], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 2 } }, DIALECTS.gemini.usage.at)).toEqual({ input: 10, output: 7, cached: 0, cacheWrite: 0 });
    expect(usageIn({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } }, DIALECTS.gemini.usage.at)).toEqual({ input: 10, output: 5, cached: 0, cacheWrite: 0 });
  });

  const streamed = { model: "m", stream: true, messages: [] };
  const asks = (name: string, rest: string, search = "") => askForUsage(table[name]!, rest, search, streamed, new TextEncoder().encode(JSON.stringify(streamed))).strip;
  it.each<[string, string, string, boolean]>([
    ["openai", "/v1/chat/completions", "", true],
    ["deepseek", "/chat/completions", "", true],
    ["gemini", "/v1beta/openai/chat/completions", "", true],
    ["azure", "/res/openai/deployments/d/chat/completions", "?api-version=2024-10-21", true],
    ["azure", "/res/openai/deployments/d/chat/completions", "?api-version=2024-09-01-preview", true],
    ["azure", "/res/openai/deployments/d/chat/completions", "?api-version=2024-08-01-preview", false],
    ["azure", "/res/openai/deployments/d/chat/completions", "?api-version=2024-02-01", false],
    ["azure", "/res/openai/deployments/d/chat/completions", "", false],
    ["azure", "/res/openai/v1/chat/completions", "?api-version=preview", true],
    ["groq", "/v1/chat/completions", "", false], // reads x_groq.usage instead
    ["mistral", "/v1/chat/completions", "", false],
    ["xai", "/v1/chat/completions", "", true], // its streams carry usage only when asked
  ])("%s %s%s: asked for streamed usage? %s", (name, rest, search, expected) => expect(asks(name, rest, search)).toBe(expected));
});

describe("model and limit scope", () => {
  it("gemini's OpenAI-compatible route names the model in the body; its native route in the path", () => {
    expect(requestModel(table.gemini!, "/v1beta/openai/chat/completions", { model: "gemini-2.0-flash" })).toBe("gemini-2.0-flash");
    expect(requestModel(table.gemini!, "/v1beta/models/gemini-2.5-pro:generateContent", { model: "x" })).toBe("gemini-2.5-pro");
  });

  it("azure: the resource and the deployment scope the key; the v1 surface's deployment is the body's model; a pool member's resource is its own", () => {
    expect(keyFor(table.azure!, "h", "/MyRes/openai/deployments/dep/chat/completions", {}, null).key).toBe("azure:myres/dep:h");
    expect(keyFor(table.azure!, "h", "/myres/openai/v1/chat/completions", { model: "dep2" }, null).key).toBe("azure:myres/dep2:h");
    expect(keyFor(table.azure!, "h", "/myres/openai/deployments/dep/chat/completions", {}, "evals").key).toBe("azure:myres/evals:h");
    const member = { ...table.azure!, baseUrl: "https://pooled.openai.azure.com", resource: "pooled" };
    expect(keyFor(member, "h", "/openai/deployments/dep/chat/completions", {}, null).key).toBe("azure:pooled/dep:h");
  });
});

describe("PROVIDERS names a dialect", () => {
  it("a custom provider may speak a built-in's dialect; an override of a built-in's base URL keeps its own; none is generic", () => {
    const t = providers({ local: { baseUrl: "http://127.0.0.1:9200", dialect: "groq" }, groq: { baseUrl: "http://127.0.0.1:9201" }, other: { baseUrl: "http://127.0.0.1:9202" } });
    expect(t.local!.dialect).toBe("groq");
    expect(t.groq!.dialect).toBe("groq");
    expect(t.other!.dialect).toBe("generic");
  });

  it.each([["nope"], [3], ["toString"], ["constructor"]])("refuses dialect %j with a clear config_error", (dialect) => {
    expect(() => providers({ local: { baseUrl: "http://127.0.0.1:9200", dialect } })).toThrow(/PROVIDERS\.local\.dialect must be one of generic, openai, anthropic, gemini, groq/);
  });
});
