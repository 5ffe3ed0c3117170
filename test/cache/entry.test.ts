import { describe, expect, it } from "vitest";
import { ageSeconds, cacheStatus, complete, type EntryMeta, fromCustomMetadata, storableHeaders, toCustomMetadata, usable } from "../../src/cache/entry";

const T = 1_800_000_000_000;
const meta = (o: Partial<EntryMeta> = {}): EntryMeta => ({ storedAt: T, expiresAt: T + 60_000, status: 200, headers: [["content-type", "application/json"]], ...o });
const bytes = (s: string) => new TextEncoder().encode(s);

describe("usable: expiry on every read, and max-age", () => {
  it("until expiresAt, never at or after it", () => {
    expect(usable(meta(), T + 59_999, null)).toBe(true);
    expect(usable(meta(), T + 60_000, null)).toBe(false);
  });
  it("max-age=N takes entries at most N seconds old", () => {
    expect(usable(meta(), T + 10_000, 10)).toBe(true);
    expect(usable(meta(), T + 10_001, 10)).toBe(false);
    expect(usable(meta(), T, 0)).toBe(true);
    expect(usable(meta(), T + 1, 0)).toBe(false);
  });
  it("age is whole seconds, never negative", () => {
    expect(ageSeconds(meta(), T + 2_999)).toBe(2);
    expect(ageSeconds(meta(), T - 5)).toBe(0);
  });
});

describe("complete: only whole answers are stored", () => {
  const sse = "text/event-stream; charset=utf-8";
  it("an OpenAI, Anthropic, Responses or Gemini stream with its final event, ended on a boundary", () => {
    expect(complete(bytes('data: {"a":1}\n\ndata: [DONE]\n\n'), sse)).toBe(true);
    expect(complete(bytes("event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n"), sse)).toBe(true);
    expect(complete(bytes('event: response.completed\ndata: {"type":"response.completed"}\n\n'), sse)).toBe(true);
    expect(complete(bytes('data: {"candidates":[{"finishReason":"STOP"}]}\n\n'), sse)).toBe(true);
  });
  it("a stream cut short: no final event, or a half-written last event", () => {
    expect(complete(bytes('data: {"a":1}\n\n'), sse)).toBe(false);
    expect(complete(bytes('data: {"a":1}\n\ndata: [DONE]'), sse)).toBe(false);
    expect(complete(bytes(""), sse)).toBe(false);
  });
  it("JSON must parse; other bodies are whole once ended", () => {
    expect(complete(bytes('{"id":1}'), "application/json")).toBe(true);
    expect(complete(bytes('{"id":'), "application/json")).toBe(false);
    expect(complete(bytes("plain"), "text/plain")).toBe(true);
    expect(complete(bytes("x"), null)).toBe(true);
  });
});

describe("headers and metadata", () => {
  it("never keeps rate-limit state, retry hints, cookies, dates or the gateway's own headers", () => {
    const h = new Headers({
      "content-type": "application/json", "x-request-id": "r1", "x-ratelimit-remaining-requests": "0", "anthropic-ratelimit-tokens-remaining": "0",
      "retry-after": "3", "retry-after-ms": "3000", date: "Mon", "set-cookie": "a=b", "x-slotgate-key": "k", "content-length": "9",
    });
    expect(storableHeaders(h)).toEqual([["content-type", "application/json"], ["x-request-id", "r1"]]);
  });
  it("never keeps whose account answered: organization, project, organization id, cookies", () => {
    const identity = { "openai-organization": "org-a", "openai-project": "proj_a", "anthropic-organization-id": "ant-a", "set-cookie": "s=1" };
    expect(storableHeaders(new Headers({ "content-type": "application/json", ...identity }))).toEqual([["content-type", "application/json"]]);
    // An entry stored before they were left out does not replay them either.
    const old = { ...toCustomMetadata(meta()), headers: JSON.stringify([["content-type", "application/json"], ["OpenAI-Organization", "org-a"], ["anthropic-organization-id", "ant-a"]]) };
    expect(fromCustomMetadata(old)?.headers).toEqual([["content-type", "application/json"]]);
  });
  it("too many headers for R2's metadata shrink to content-type", () => {
    const h = new Headers({ "content-type": "text/event-stream" });
    for (let i = 0; i < 40; i++) h.set(`x-extra-${i}`, "v".repeat(40));
    expect(storableHeaders(h)).toEqual([["content-type", "text/event-stream"]]);
  });
  it("round-trips through custom metadata; anything damaged reads as null", () => {
    expect(fromCustomMetadata(toCustomMetadata(meta()))).toEqual(meta());
    expect(fromCustomMetadata(undefined)).toBeNull();
    expect(fromCustomMetadata({ ...toCustomMetadata(meta()), storedAt: "x" })).toBeNull();
    expect(fromCustomMetadata({ ...toCustomMetadata(meta()), headers: "[1]" })).toBeNull();
    expect(fromCustomMetadata({ ...toCustomMetadata(meta()), headers: "{" })).toBeNull();
  });
});

describe("cacheStatus (RFC 9211)", () => {
  it("names the cache and says hit, or why the request went on", () => {
    expect(cacheStatus({ hit: true })).toBe("slotgate; hit");
    expect(cacheStatus({ fwd: "miss", stored: true })).toBe("slotgate; fwd=miss; stored");
    expect(cacheStatus({ fwd: "miss", collapsed: true })).toBe("slotgate; fwd=miss; collapsed");
    expect(cacheStatus({ fwd: "request", stored: true })).toBe("slotgate; fwd=request; stored");
    expect(cacheStatus({ fwd: "bypass" })).toBe("slotgate; fwd=bypass");
  });
});
