import { describe, expect, it } from "vitest";
import { classify as classifyIn, keyUnusable as unusableIn } from "../../src/policy/classify";
import { DIALECTS } from "../../src/providers/dialects";

// The generic dialect reads every rule, as the classifier did before dialects: these cases hold for it.
const classify = (status: number, body: unknown) => classifyIn(status, body, DIALECTS.generic);
const keyUnusable = (status: number, body: unknown) => unusableIn(status, body, DIALECTS.generic);

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
/** As clients quote them (providers/dialects.ts cites where). */
const OPENAI_TOO_LARGE = openai("rate_limit_exceeded", "tokens",
  "Request too large for gpt-4o-mini in organization org-abc on tokens per min (TPM): Limit 200000, Requested 1000040. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.");
const GROQ_TOO_LARGE = { error: { message: "Request too large for model `llama-3.3-70b-versatile` in organization `org_01` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 14137, please reduce your message size and try again.", type: "tokens", code: "rate_limit_exceeded" } };
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

  // One request above the key's limit: refused however long it waits, so neither the key's rate
  // limit (a cut, a shut gate, a retry) nor a member's spent key.
  it.each<Case>([
    ["OpenAI's 429 Request too large", 429, OPENAI_TOO_LARGE],
    ["OpenAI's, without the organization", 429, openai("rate_limit_exceeded", "tokens", "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 342389. The input or output tokens must be reduced in order to run successfully.")],
    ["Groq's 413 on tokens per minute", 413, GROQ_TOO_LARGE],
    ["Anthropic's 413 request_too_large", 413, anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes.")],
    ["a 413 with a plain body", 413, "Payload Too Large"],
  ])("too_large: %s", (_, status, body) => expect(classify(status, body)).toBe("too_large"));

  it("reads too-large refusals in the dialects that send them, and a caller's model name never makes a rate limit one", () => {
    expect(classifyIn(429, OPENAI_TOO_LARGE, DIALECTS.openai)).toBe("too_large");
    expect(classifyIn(429, OPENAI_RATE, DIALECTS.openai)).toBe("rate_limit");
    expect(classifyIn(413, GROQ_TOO_LARGE, DIALECTS.groq)).toBe("too_large");
    expect(classifyIn(413, anthropic("request_too_large", "Request exceeds the maximum allowed number of bytes."), DIALECTS.anthropic)).toBe("too_large");
    // Azure documents no such refusal: its 429 stays the key's.
    expect(classifyIn(429, OPENAI_TOO_LARGE, DIALECTS.azure)).toBe("rate_limit");
    // A model named to look like the sentence: a model name with spaces is not one, and a rate limit's sentence starts otherwise.
    const forged = openai("rate_limit_exceeded", "tokens", "Rate limit reached for Request too large for x on tokens per min (TPM): Limit 1, Requested 2. in organization org-abc on tokens per min (TPM): Limit 200000, Used 199500, Requested 1200. Please try again in 210ms.");
    expect(classifyIn(429, forged, DIALECTS.openai)).toBe("rate_limit");
    expect(classifyIn(429, openai("rate_limit_exceeded", "tokens", "Request too large for my model on tokens per min (TPM): Limit 1, Requested 2."), DIALECTS.openai)).toBe("rate_limit");
    expect(unusableIn(429, OPENAI_TOO_LARGE, DIALECTS.openai)).toBeNull();
  });

  it.each<Case>([
    ["OpenAI 429 insufficient_quota", 429, OPENAI_QUOTA],
    ["OpenAI insufficient_quota as raw JSON text", 429, JSON.stringify(OPENAI_QUOTA)],
    ["OpenAI billing_hard_limit_reached (a 400)", 400, openai("billing_hard_limit_reached", "invalid_request_error", "Billing hard limit has been reached")],
    ["OpenAI credit_balance_exhausted code", 429, openai("credit_balance_exhausted", "insufficient_quota", "Your credit balance is exhausted.")],
    ["OpenAI access_terminated", 403, openai("access_terminated", "invalid_request_error", "Your access was terminated due to violation of our policies.")],
    ["a 402 with a quota code", 402, openai("insufficient_quota", "billing", "Payment required")],
    ["Anthropic spend limit (details.error_code)", 429, anthropic("rate_limit_error", "You have reached your API usage limits.", { error_code: "enforced_spend_limit_reached" })],
    ["Anthropic enforced_spend_limit_reached as error.type", 429, anthropic("enforced_spend_limit_reached", "Spend limit reached")],
    ["Anthropic credit balance too low: the fixed sentence, whole (it has no code)", 400, anthropic("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.")],
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
    ["404", 404, null], ["422", 422, {}],
    ...[501, 505, 525, 526, 530, 599, 0, 100, Number.NaN].map((s): Case => [String(s), s, null]),
  ])("fatal: %s", (_, status, body) => expect(classify(status, body)).toBe("fatal"));

  // What a caller sends may come back in a message (a 404 names the model it was asked for): a
  // message, a status text or a raw body never makes hard quota, or a caller could take a pool's
  // members out. Only the codes the provider sets do, on the statuses quota comes with.
  it.each<[string, number, unknown, string]>([
    ["a 404 naming the model the caller sent", 404, openai("model_not_found", "invalid_request_error", "The model `insufficient_quota` does not exist or you do not have access to it."), "fatal"],
    ["a 400 echoing the caller's text", 400, anthropic("invalid_request_error", "messages.0.content: credit_balance_exhausted enforced_spend_limit_reached"), "fatal"],
    ["credit_balance_exhausted only in the message of a 429", 429, openai(null, "requests", "Request failed: credit_balance_exhausted"), "rate_limit"],
    ["insufficient_quota in non-JSON text", 429, "error: insufficient_quota", "rate_limit"],
    ["Anthropic's low-credit sentence inside a longer message", 400, anthropic("invalid_request_error", "model: Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."), "fatal"],
    ["Anthropic's low-credit sentence with more after it", 400, anthropic("invalid_request_error", "Your credit balance is too low to access the Anthropic API. x"), "fatal"],
    ["a quota code on a 404", 404, openai("insufficient_quota", "insufficient_quota", "x"), "fatal"],
    ["a quota code on a 500", 500, openai("insufficient_quota", "insufficient_quota", "x"), "transient"],
  ])("never from a message or an unlikely status: %s", (_, status, body, cls) => expect(classify(status, body)).toBe(cls));

  it("does not mistake a longer code for a quota code", () => {
    expect(classify(429, openai("not_insufficient_quota_test", "x", "x"))).toBe("rate_limit");
  });
});

describe("keyUnusable: the evidence that takes a pool member out", () => {
  const googleKey = (status: number, reason: string) => ({
    error: { code: status, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com" }] },
  });

  it.each<[string, number, unknown, string]>([
    ["OpenAI insufficient_quota", 429, OPENAI_QUOTA, "insufficient_quota"],
    ["OpenAI invalid key", 401, openai("invalid_api_key", "invalid_request_error", "Incorrect API key provided: sk-abc***."), "invalid_api_key"],
    ["Anthropic invalid key", 401, anthropic("authentication_error", "invalid x-api-key"), "authentication_error"],
    ["Azure invalid key", 401, { error: { code: "401", message: "Access denied due to invalid subscription key or wrong API endpoint." } }, "401"],
    ["Anthropic out of credit", 400, anthropic("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."), "credit_balance_too_low"],
    ["Gemini daily quota", 429, GEMINI_DAY, "daily_quota"],
    ["Gemini invalid key (a 400 with ErrorInfo)", 400, googleKey(400, "API_KEY_INVALID"), "api_key_invalid"],
    ["OpenAI access terminated (403)", 403, openai("access_terminated", "invalid_request_error", "Your access was terminated."), "access_terminated"],
  ])("out: %s", (_, status, body, reason) => expect(keyUnusable(status, body)).toBe(reason));

  it.each<[string, number, unknown]>([
    // A restricted key without one endpoint's permission: the next request may be fine.
    ["OpenAI 401 missing scopes", 401, openai(null, "invalid_request_error", "You have insufficient permissions for this operation. Missing scopes: api.model.embeddings.request.")],
    ["Anthropic 403 permission_error", 403, anthropic("permission_error", "Your API key does not have permission to use the specified resource.")],
    ["OpenAI 403 model access", 403, openai("model_not_found", "invalid_request_error", "Project proj_x does not have access to model gpt-5")],
    ["a 404 naming insufficient_quota", 404, openai("model_not_found", "invalid_request_error", "The model `insufficient_quota` does not exist")],
    ["a 401 with nothing to say why", 401, null],
    ["a bare 403", 403, "Forbidden"],
    ["a rate limit", 429, OPENAI_RATE],
    ["invalid_api_key on a 400", 400, openai("invalid_api_key", "invalid_request_error", "x")],
  ])("not out: %s", (_, status, body) => expect(keyUnusable(status, body)).toBeNull());
});
