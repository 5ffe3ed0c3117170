import { describe, expect, it } from "vitest";
import { callerHeaders, parseJson, upstreamHeaders } from "../../src/proxy/forward";
import { bearerOk, gatewayTokenOk, safeEqual } from "../../src/auth";

describe("headers", () => {
  it("drops hop-by-hop, host, cf-* and x-slotgate-* going upstream, keeps the rest", () => {
    const out = upstreamHeaders(new Headers({
      authorization: "Bearer k", "content-type": "application/json", "anthropic-version": "2023-06-01",
      connection: "keep-alive", host: "gw", "cf-ray": "1", "cf-connecting-ip": "1.1.1.1", "x-slotgate-token": "t",
      "x-slotgate-limit-key": "l", "content-length": "5", "transfer-encoding": "chunked", "x-forwarded-for": "2.2.2.2",
    }));
    expect([...out.keys()].sort()).toEqual(["anthropic-version", "authorization", "content-type"]);
  });

  it("passes the provider's headers back, minus hop-by-hop and encoding", () => {
    const out = callerHeaders(new Headers({ "x-ratelimit-remaining-requests": "3", "content-encoding": "gzip", connection: "close", "retry-after": "2" }));
    expect([...out.keys()].sort()).toEqual(["retry-after", "x-ratelimit-remaining-requests"]);
  });

  it("drops every header Connection names, every proxy-* header and the caller's cookies going upstream", () => {
    const out = upstreamHeaders(new Headers({
      authorization: "Bearer k", connection: "close, X-Trace-Hop ,keep-alive", "x-trace-hop": "1",
      "proxy-authorization": "Basic x", "proxy-foo": "1", cookie: "session=secret", "x-kept": "1",
    }));
    expect([...out.keys()].sort()).toEqual(["authorization", "x-kept"]);
  });

  it("never lets a provider set x-slotgate-* or a Connection-named header on the caller's answer", () => {
    const out = callerHeaders(new Headers({
      "x-slotgate-error": "queue_timeout", "x-slotgate-key": "forged", connection: "x-upstream-hop", "x-upstream-hop": "1",
      "proxy-authenticate": "Basic", "content-type": "application/json",
    }));
    expect([...out.keys()].sort()).toEqual(["content-type"]);
  });
});

describe("parseJson", () => {
  it("parses JSON when it is JSON, else null", () => {
    expect(parseJson(new TextEncoder().encode('{"a":1}'))).toEqual({ a: 1 });
    expect(parseJson(new TextEncoder().encode("{nope"))).toBeNull();
    expect(parseJson(new Uint8Array(0))).toBeNull();
  });
});

describe("auth", () => {
  it("compares secrets exactly", async () => {
    expect(await safeEqual("abc", "abc")).toBe(true);
    expect(await safeEqual("abc", "abd")).toBe(false);
    expect(await safeEqual("abc", "abcd")).toBe(false);
  });
  it("accepts any listed gateway token, and anything when none is configured", async () => {
    expect(await gatewayTokenOk(undefined, null)).toBe(true);
    expect(await gatewayTokenOk(" , ", null)).toBe(true);
    expect(await gatewayTokenOk("a,b", "b")).toBe(true);
    expect(await gatewayTokenOk("a,b", "c")).toBe(false);
    expect(await gatewayTokenOk("a,b", null)).toBe(false);
  });
  it("reads a bearer token", async () => {
    expect(await bearerOk("tok", "Bearer tok")).toBe(true);
    expect(await bearerOk("tok", "bearer  tok ")).toBe(true);
    expect(await bearerOk("tok", "Basic tok")).toBe(false);
    expect(await bearerOk("tok", undefined)).toBe(false);
  });
});
