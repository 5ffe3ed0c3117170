import { describe, expect, it } from "vitest";
import {
  MAX_WAIT_MS, parseDuration, parseReset, parseRetryAfter, parseRetryInfo,
} from "../../src/policy/headers";
import { parseRateLimitHeaders as parseIn } from "../../src/policy/limits";
import { DIALECTS } from "../../src/providers/dialects";

// The generic dialect reads every family, as the parser did before dialects: these cases hold for it.
const parseRateLimitHeaders = (h: Headers, now: number, body?: unknown) => parseIn(h, now, DIALECTS.generic, body);

// Sunday 2026-11-22 08:00:00 UTC: every relative expectation below is from here.
const NOW = Date.UTC(2026, 10, 22, 8, 0, 0);
const DAY = 86_400_000;
// Values that must never parse as a wait, whatever the parser.
const GARBAGE = ["", " ", "NaN", "-1", "-0.5", "Infinity", "-Infinity", "1e400", "1e3", "0x10", "+2", "soon", "null", "1,5", "١٢"];

const geminiBody = (details: unknown[], status = "RESOURCE_EXHAUSTED") => ({
  error: { code: 429, message: "You exceeded your current quota, please check your plan and billing details.", status, details },
});
const retryInfo = (retryDelay: unknown) => ({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay });

describe("parseDuration", () => {
  it.each([
    ["6m0s", 360_000], ["20ms", 20], ["1.5s", 1500], ["1m30.5s", 90_500], ["0.5m", 30_000], ["1h2m", 3_720_000],
    ["2m59.56s", 179_560], ["7.66s", 7660], [".5s", 500], ["0s", 0], ["24h", DAY], [" 1s ", 1000], ["1.1s", 1100],
    ["250us", 0.25], ["250µs", 0.25], ["250μs", 0.25], ["1500000ns", 1.5], ["1s500ms", 1500], ["1h0m0.001s", 3_600_001],
  ])("%s → %d ms", (v, ms) => expect(parseDuration(v)).toBe(ms));

  it.each([
    ...GARBAGE, "2", "1.5", "s", "ms", "-1s", "1e3s", "1e400s", "1x", "1s2", "1.5.5s", "1d", "s1", "1 s", "1S",
    "25h", "24h1ms", "1000000000h", `${"9".repeat(60)}s`, `${"1s".repeat(40)}`, "1s;drop",
  ])("rejects %j", (v) => expect(parseDuration(v)).toBeNull());
});

describe("parseRetryAfter", () => {
  it.each([
    ["2", 2000], ["1.5", 1500], ["0", 0], [" 3 ", 3000], ["86400", DAY],
    ["Sun, 22 Nov 2026 08:00:30 GMT", 30_000], // IMF-fixdate
    ["Sunday, 22-Nov-26 08:00:30 GMT", 30_000], // RFC 850
    ["Sun Nov 22 08:00:30 2026", 30_000], // asctime
    ["Sun, 22 Nov 2026 07:59:00 GMT", 0], // already past: go now, not never
  ])("%j → %d ms", (v, ms) => expect(parseRetryAfter(v, NOW)).toBe(ms));

  it.each([
    ...GARBAGE, "86401", "Tue, 24 Nov 2026 08:00:01 GMT", "Sun, 31 Feb 2026 08:00:00 GMT", "Sun, 22 Foo 2026 08:00:30 GMT",
    "Sun, 22 Nov 2026 25:00:30 GMT", "2s", "2026-11-22T08:00:30Z",
  ])("rejects %j", (v) => expect(parseRetryAfter(v, NOW)).toBeNull());
});

describe("parseReset", () => {
  it.each([
    ["6m0s", NOW + 360_000], ["20ms", NOW + 20], ["0.5m", NOW + 30_000],
    ["2026-11-22T08:05:09Z", NOW + 309_000], // Anthropic: a timestamp, not 2026 seconds
    ["2026-11-22T08:05:09.5Z", NOW + 309_500], ["2026-11-22T08:05:09.123456789Z", NOW + 309_123],
    ["2026-11-22T09:05:09+01:00", NOW + 309_000], ["2026-11-22T03:05:09-05:00", NOW + 309_000],
    ["2026-11-22t08:05:09z", NOW + 309_000], ["2026-11-22 08:05:09Z", NOW + 309_000],
    ["2026-11-22T07:59:59Z", NOW - 1000], // slightly past: the window has already rolled over
    ["30", NOW + 30_000], ["1.5", NOW + 1500], ["0", NOW],
    [String(NOW / 1000 + 60), NOW + 60_000], // epoch seconds
    [String(NOW + 60_000), NOW + 60_000], // epoch ms (OpenRouter)
    ["Sun, 22 Nov 2026 08:01:00 GMT", NOW + 60_000],
  ])("%j → now%+d", (v, at) => expect(parseReset(v, NOW)).toBe(at));

  it.each([
    ...GARBAGE, "86401", "2026-11-24T08:00:00Z", "2026-11-21T07:59:59Z", "1000000001", String(NOW + 2 * DAY),
    "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T08:05:09+25:00",
    "2026-11-22T08:05:09", "2026-11-22", "25h",
  ])("rejects %j", (v) => expect(parseReset(v, NOW)).toBeNull());
});

describe("parseRetryInfo", () => {
  const body = geminiBody([
    { "@type": "type.googleapis.com/google.rpc.Help", links: [{ url: "https://ai.google.dev/gemini-api/docs/rate-limits" }] },
    retryInfo("30s"),
  ]);
  it("reads retryDelay from a Gemini 429 body", () => expect(parseRetryInfo(body)).toBe(30_000));
  it("reads it from the array Gemini sometimes wraps the body in", () => expect(parseRetryInfo([body])).toBe(30_000));
  it("reads it from raw JSON text", () => expect(parseRetryInfo(JSON.stringify(body))).toBe(30_000));
  it("keeps fractional seconds", () => expect(parseRetryInfo(geminiBody([retryInfo("59.628721472s")]))).toBe(59_628.721));
  it("reads the proto {seconds, nanos} form", () =>
    expect(parseRetryInfo(geminiBody([retryInfo({ seconds: "30", nanos: 500_000_000 })]))).toBe(30_500));
  it.each([
    null, undefined, 42, "garbage", "", [], {}, { error: "x" }, { error: { details: "x" } }, geminiBody([]),
    geminiBody([retryInfo("-1s")]), geminiBody([retryInfo("1e400s")]), geminiBody([retryInfo("100000s")]),
    geminiBody([retryInfo(30)]), geminiBody([retryInfo({ seconds: "Infinity" })]), geminiBody([null, 1, "x"]),
  ])("rejects %j", (b) => expect(parseRetryInfo(b)).toBeNull());
});

describe("parseRateLimitHeaders", () => {
  const parse = (h: Record<string, string>, body?: unknown) => parseRateLimitHeaders(new Headers(h), NOW, body);

  it("parses a real OpenAI 429 header set end to end", () => {
    expect(parse({
      "content-type": "application/json; charset=utf-8", "x-request-id": "req_5a1b2c3d4e5f",
      "openai-organization": "user-abc123", "openai-processing-ms": "12", "retry-after": "7",
      "x-ratelimit-limit-requests": "500", "x-ratelimit-limit-tokens": "200000",
      "x-ratelimit-remaining-requests": "499", "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-requests": "120ms", "x-ratelimit-reset-tokens": "6m0s",
    })).toEqual({
      retryAfterMs: 7000,
      requests: { limit: 500, remaining: 499, resetAt: NOW + 120, periodMs: 60_000 },
      tokens: { limit: 200_000, remaining: 0, resetAt: NOW + 360_000, periodMs: 60_000 },
    });
  });

  const anthropic = {
    "request-id": "req_011CSHoEeqs5C35K2UUqR7Fy", "anthropic-organization-id": "0b3c2d1e", "retry-after": "42",
    "anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
    "anthropic-ratelimit-requests-reset": "2026-11-22T08:00:42Z",
    "anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "38000",
    "anthropic-ratelimit-input-tokens-reset": "2026-11-22T08:00:03Z",
    "anthropic-ratelimit-output-tokens-limit": "8000", "anthropic-ratelimit-output-tokens-remaining": "1000",
    "anthropic-ratelimit-output-tokens-reset": "2026-11-22T08:00:45Z",
    "anthropic-ratelimit-tokens-limit": "48000", "anthropic-ratelimit-tokens-remaining": "39000",
    "anthropic-ratelimit-tokens-reset": "2026-11-22T08:00:03Z",
  };
  const output = { limit: 8000, remaining: 1000, resetAt: NOW + 45_000, periodMs: 60_000 };

  it("parses a real Anthropic header set end to end, preferring the combined tokens window", () => {
    expect(parse(anthropic)).toEqual({
      retryAfterMs: 42_000,
      requests: { limit: 50, remaining: 0, resetAt: NOW + 42_000, periodMs: 60_000 },
      tokens: { limit: 48_000, remaining: 39_000, resetAt: NOW + 3000, periodMs: 60_000 },
    });
  });

  it("without a combined window, takes the tighter of input and output tokens", () => {
    const { "anthropic-ratelimit-tokens-limit": _l, "anthropic-ratelimit-tokens-remaining": _r,
      "anthropic-ratelimit-tokens-reset": _t, ...split } = anthropic;
    expect(parse(split).tokens).toEqual(output); // 1000/8000 < 38000/40000
    expect(parse({ ...split, "anthropic-ratelimit-input-tokens-remaining": "100" }).tokens)
      .toEqual({ limit: 40_000, remaining: 100, resetAt: NOW + 3000, periodMs: 60_000 });
  });

  it.each([
    [{ "retry-after-ms": "1500", "x-ms-retry-after-ms": "2500", "retry-after": "3" }, 1500],
    [{ "x-ms-retry-after-ms": "2500", "retry-after": "3" }, 2500],
    [{ "retry-after-ms": "NaN", "x-ms-retry-after-ms": "2500" }, 2500], // invalid falls through
    [{ "retry-after-ms": "-5", "retry-after": "3" }, 3000],
    [{ "retry-after": "Sun, 22 Nov 2026 08:00:30 GMT" }, 30_000],
    [{ "retry-after": "90000000" }, null],
    [{}, null],
  ])("retryAfterMs priority %j → %s", (h, ms) => expect(parse(h).retryAfterMs).toBe(ms));

  it("falls back to Gemini RetryInfo in the body, after every header", () => {
    const body = [geminiBody([retryInfo("30s")])];
    expect(parse({}, body).retryAfterMs).toBe(30_000);
    expect(parse({ "retry-after": "5" }, body).retryAfterMs).toBe(5000);
  });

  it.each([
    [{ "x-ratelimit-limit": "20", "x-ratelimit-remaining": "3", "x-ratelimit-reset": String(NOW + 9000) }, { limit: 20, remaining: 3, resetAt: NOW + 9000, periodMs: 60_000 }],
    [{ "ratelimit-limit": "100", "ratelimit-remaining": "40", "ratelimit-reset": "12" }, { limit: 100, remaining: 40, resetAt: NOW + 12_000, periodMs: 60_000 }],
    [{ ratelimit: '"default";r=50;t=30', "ratelimit-policy": '"default";q=100;w=60' }, { limit: 100, remaining: 50, resetAt: NOW + 30_000, periodMs: 60_000 }],
    [{ ratelimit: '"burst";r=80;t=10, "daily";r=20;t=3600', "ratelimit-policy": '"burst";q=100;w=60, "daily";q=1000;w=86400' },
      { limit: 1000, remaining: 20, resetAt: NOW + 3_600_000, periodMs: 86_400_000 }], // the tightest policy
    [{ "ratelimit-policy": '"default";q=100;w=60' }, { limit: 100, remaining: null, resetAt: null, periodMs: 60_000 }],
    [{ "x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "-5" }, { limit: 60, remaining: null, resetAt: null, periodMs: 60_000 }],
    [{ "x-ratelimit-limit-requests": "60", "x-ratelimit-limit": "1" }, { limit: 60, remaining: null, resetAt: null, periodMs: 60_000 }],
  ])("requests from %j", (h, requests) => expect(parse(h).requests).toEqual(requests));

  it("a reading with nothing usable is null", () => {
    expect(parse({})).toEqual({ retryAfterMs: null, requests: null, tokens: null });
    expect(parse({
      "x-ratelimit-limit-requests": "NaN", "x-ratelimit-remaining-requests": "-1", "x-ratelimit-reset-requests": "Infinity",
      "anthropic-ratelimit-tokens-limit": "1e400", "anthropic-ratelimit-tokens-reset": "2099-01-01T00:00:00Z",
      ratelimit: '"x";r=-1;t=abc', "retry-after": "never",
    })).toEqual({ retryAfterMs: null, requests: null, tokens: null });
  });

  it("never throws and never returns an unusable number, whatever the strings", () => {
    const alphabet = ["0", "1", "9", ".", "-", "e", "s", "m", "h", "u", "µ", "n", "T", "Z", ":", "+", " ", ",", ";", "=", '"', "\u0000", "🙂", "Infinity", "NaN", "GMT"];
    let seed = 42;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    for (let i = 0; i < 3000; i++) {
      const v = Array.from({ length: 1 + Math.floor(rand() * 24) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join("");
      for (const ms of [parseDuration(v), parseRetryAfter(v, NOW)]) {
        if (ms !== null) expect(ms >= 0 && ms <= MAX_WAIT_MS).toBe(true);
      }
      const at = parseReset(v, NOW);
      if (at !== null) expect(Math.abs(at - NOW) <= MAX_WAIT_MS).toBe(true);
      expect(() => parseRetryInfo(v)).not.toThrow();
      expect(() => parseRateLimitHeaders(new Headers({ "retry-after": v.replace(/[\u0000🙂µ]/g, ""), ratelimit: "x" }), NOW, v)).not.toThrow();
    }
  });
});
