import { describe, expect, it } from "vitest";
import { answerInit } from "../../src/proxy/answer";
import { isQuotaHeader, PROVIDER_PREFIX } from "../../src/proxy/quota-headers";

describe("provider quota headers on a success", () => {
  it("moves OpenAI's, Anthropic's, the IETF draft's and retry hints under the prefix, values unchanged", () => {
    const upstream = new Headers({
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-requests": "6m0s",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-input-tokens-reset": "2026-11-24T10:00:00Z",
      ratelimit: "limit=10, remaining=0, reset=1",
      "ratelimit-policy": "10;w=1",
      "retry-after": "3",
      "retry-after-ms": "2500",
      "content-type": "application/json",
      "x-request-id": "req_1",
      "openai-processing-ms": "120",
    });
    const h = answerInit(new Response(null, { headers: upstream })).headers as Headers;
    for (const name of ["x-ratelimit-remaining-requests", "x-ratelimit-remaining-tokens", "anthropic-ratelimit-tokens-remaining", "ratelimit", "retry-after", "retry-after-ms"])
      expect(h.get(name), name).toBeNull();
    expect(h.get(`${PROVIDER_PREFIX}x-ratelimit-remaining-requests`)).toBe("0");
    expect(h.get(`${PROVIDER_PREFIX}x-ratelimit-reset-requests`)).toBe("6m0s");
    expect(h.get(`${PROVIDER_PREFIX}anthropic-ratelimit-input-tokens-reset`)).toBe("2026-11-24T10:00:00Z");
    expect(h.get(`${PROVIDER_PREFIX}ratelimit-policy`)).toBe("10;w=1");
    expect(h.get(`${PROVIDER_PREFIX}retry-after-ms`)).toBe("2500");
    expect(h.get("content-type")).toBe("application/json");
    expect(h.get("x-request-id")).toBe("req_1");
    expect(h.get("openai-processing-ms")).toBe("120");
  });

  it("leaves look-alikes alone", () => {
    for (const name of ["x-ratelimiter", "ratelimited", "retry-afterwards", "x-slotgate-limit", "x-slotgate-rate", "openai-ratelimit"])
      expect(isQuotaHeader(name), name).toBe(false);
  });
});
