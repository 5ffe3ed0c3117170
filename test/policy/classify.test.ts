import { describe, expect, it } from "vitest";
import { classify } from "../../src/policy/classify";

type Case = [name: string, status: number, body: unknown];

const openai = (code: string | null, type: string, message: string) => ({ error: { message, type, param: null, code } });
const anthropic = (type: string, message: string, details?: object) => ({ type: "error", error: { type, message, ...(details && { details }) } });
const gemini = (quotaId: string, retryDelay = "30s") => ({
  error: {
    code: 429,
    message: `You exceeded your current quota, please check your plan and billing details. * Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 15, model: gemini-2.0-flash\nPlease retry in ${retryDelay}.`,
    status: "RESOURCE_EXHAUSTED",
    details: [
      { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{
        quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests", quotaId,
        quotaDimensions: { location: "global", model: "gemini-2.0-flash" }, quotaValue: "15" }] },
      { "@type": "type.googleapis.com/google.rpc.Help", links: [{ description: "Learn more about Gemini API quotas", url: "https://ai.google.dev/gemini-api/docs/rate-limits" }] },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay },
    ],
  },
});

const OPENAI_RATE = openai("rate_limit_exceeded", "tokens",
  "Rate limit reached for gpt-4o-mini in organization org-abc on tokens per min (TPM): Limit 200000, Used 199500, Requested 1200. Please try again in 210ms. Visit https://platform.openai.com/account/rate-limits to learn more.");
const OPENAI_QUOTA = openai("insufficient_quota", "insufficient_quota",
  "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.");
const ANTHROPIC_RATE = anthropic("rate_limit_error",
  "This request would exceed the rate limit for your organization of 50,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.");
const GEMINI_MINUTE = gemini("GenerateRequestsPerMinutePerProjectPerModel-FreeTier");
const GEMINI_DAY = gemini("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "59s");

describe("classify", () => {
  it.each<Case>([
    ["200", 200, { id: "chatcmpl-1" }], ["204", 204, null], ["304", 304, null],
    ["200 even with a quota word in it", 200, OPENAI_QUOTA],
  ])("success: %s", (_, status, body) => expect(classify(status, body)).toBe("success"));

  it.each<Case>([
    ["OpenAI 429 rate_limit_exceeded", 429, OPENAI_RATE],
    ["Anthropic 429 rate_limit_error", 429, ANTHROPIC_RATE],
    ["Gemini 429 RESOURCE_EXHAUSTED per minute, with RetryInfo (despite 'exceeded your current quota')", 429, GEMINI_MINUTE],
    ["Gemini per-minute body as raw JSON text", 429, JSON.stringify(GEMINI_MINUTE)],
    ["Gemini per-minute body wrapped in an array", 429, [GEMINI_MINUTE]],
    ["Google RESOURCE_EXHAUSTED under another status", 400, { error: { code: 400, message: "Resource has been exhausted (e.g. check quota).", status: "RESOURCE_EXHAUSTED" } }],
    ["bare 429, no body", 429, null],
    ["429 with plain text", 429, "Too Many Requests"],
    ["429 with a number body", 429, 42],
  ])("rate_limit: %s", (_, status, body) => expect(classify(status, body)).toBe("rate_limit"));

  it.each<Case>([
    ["OpenAI 429 insufficient_quota", 429, OPENAI_QUOTA],
    ["OpenAI insufficient_quota as raw JSON text", 429, JSON.stringify(OPENAI_QUOTA)],
    ["insufficient_quota in non-JSON text", 429, "error: insufficient_quota"],
    ["OpenAI billing_hard_limit_reached", 400, openai("billing_hard_limit_reached", "invalid_request_error", "Billing hard limit has been reached")],
    ["OpenAI credit_balance_exhausted code", 429, openai("credit_balance_exhausted", "insufficient_quota", "Your credit balance is exhausted.")],
    ["credit_balance_exhausted only in the message", 429, openai(null, "requests", "Request failed: credit_balance_exhausted")],
    ["OpenAI access_terminated", 403, openai("access_terminated", "invalid_request_error", "Your access was terminated due to violation of our policies.")],
    ["Anthropic spend limit (details.error_code)", 429, anthropic("rate_limit_error", "You have reached your API usage limits.", { error_code: "enforced_spend_limit_reached" })],
    ["Anthropic enforced_spend_limit_reached as error.type", 429, anthropic("enforced_spend_limit_reached", "Spend limit reached")],
    ["Anthropic enforced_spend_limit_reached in message", 400, anthropic("invalid_request_error", "enforced_spend_limit_reached: monthly limit")],
    ["Anthropic credit balance too low", 400, anthropic("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")],
    ["Gemini PerDay QuotaFailure", 429, GEMINI_DAY],
    ["Gemini PerDay wrapped in an array", 429, [GEMINI_DAY]],
    ["Gemini daily token quota id", 429, gemini("GenerateContentInputTokensPerModelPerDay-FreeTier")],
    ["unwrapped gateway body", 429, { code: "insufficient_quota", message: "quota" }],
  ])("hard_quota: %s", (_, status, body) => expect(classify(status, body)).toBe("hard_quota"));

  it.each<Case>([
    ["Anthropic 529 overloaded_error", 529, anthropic("overloaded_error", "Overloaded")],
    ["Cloudflare 524 A Timeout Occurred", 524, "<!DOCTYPE html><title>api.example.com | 524: A timeout occurred</title>"],
    ["OpenAI 500", 500, { error: { message: "The server had an error while processing your request. Sorry about that!", type: "server_error", param: null, code: null } }],
    ["OpenAI 503 slow_down", 503, openai("slow_down", "service_unavailable", "Please reduce your request rate.")],
    ...[408, 502, 504, 520, 521, 522, 523].map((s): Case => [String(s), s, null]),
  ])("transient: %s", (_, status, body) => expect(classify(status, body)).toBe("transient"));

  it.each<Case>([
    ["400 invalid_request_error", 400, anthropic("invalid_request_error", "max_tokens: Field required")],
    ["400 OpenAI context length", 400, openai("context_length_exceeded", "invalid_request_error", "This model's maximum context length is 128000 tokens.")],
    ["401 invalid key", 401, openai("invalid_api_key", "invalid_request_error", "Incorrect API key provided: sk-abc***.")],
    ["401 Anthropic", 401, anthropic("authentication_error", "invalid x-api-key")],
    ["403 permission", 403, anthropic("permission_error", "Your API key does not have permission to use the specified resource.")],
    ["404", 404, null], ["413", 413, "Payload Too Large"], ["422", 422, {}],
    ...[501, 505, 525, 526, 530, 599, 0, 100, Number.NaN].map((s): Case => [String(s), s, null]),
  ])("fatal: %s", (_, status, body) => expect(classify(status, body)).toBe("fatal"));

  it("reads statusText as one more place a provider may name the quota", () => {
    expect(classify(429, null, "Too Many Requests")).toBe("rate_limit");
    expect(classify(429, null, "insufficient_quota")).toBe("hard_quota");
  });

  it("does not mistake a longer code for a quota code", () => {
    expect(classify(429, openai("not_insufficient_quota_test", "x", "x"), undefined)).toBe("rate_limit");
  });
});
