import { afterEach, describe, expect, it, vi } from "vitest";
import { CHAT, RATE_LIMITED, chat, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

describe("proxy", () => {
  it("forwards to the provider and returns its answer with the gateway headers", async () => {
    const { calls } = mockUpstream(() => json(CHAT, 200, { "x-ratelimit-remaining-requests": "499", "x-ratelimit-limit-requests": "500", "x-ratelimit-reset-requests": "120ms" }));
    const res = await chat({ headers: { "x-slotgate-limit-key": "evals", "cf-connecting-ip": "1.2.3.4" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(CHAT);
    expect(res.headers.get("x-slotgate-attempts")).toBe("1");
    expect(res.headers.get("x-slotgate-key")).toMatch(/^openai:evals:[0-9a-f]{16}$/);
    expect(calls[0]!.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(calls[0]!.headers.get("authorization")).toBe("Bearer sk-test");
    expect(calls[0]!.headers.get("x-slotgate-limit-key")).toBeNull();
    expect(calls[0]!.headers.get("cf-connecting-ip")).toBeNull();
  });

  it("retries a 429 and the caller sees the 200", async () => {
    mockUpstream((_, n) => (n === 1 ? json(RATE_LIMITED, 429, { "retry-after-ms": "20" }) : json(CHAT)));
    const res = await chat({ key: "sk-retry" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-slotgate-attempts")).toBe("2");
  });
});
