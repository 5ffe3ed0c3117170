import { describe, expect, it } from "vitest";
import { type CacheConfig, MAX_TTL_S } from "../../src/cache/config";
import { cachePlan, DEFAULT_NAMESPACE, parseCacheControl } from "../../src/cache/directives";

const OFF: CacheConfig = { on: false, ttlS: 604_800, maxBytes: 1_000 };
const ON: CacheConfig = { ...OFF, on: true };
const plan = (h: Record<string, string>, cfg = OFF, inference = true) => cachePlan((n) => h[n] ?? null, inference, cfg);
const USE = { use: true, read: true, write: true, only: false, maxAgeS: null, ttlS: 604_800, namespace: DEFAULT_NAMESPACE, sample: 0 };
/** Asked for while CACHE is off: kept a day at most. */
const OPTED = { ...USE, ttlS: 86_400 };

describe("cachePlan: whether the cache is used", () => {
  it("off unless CACHE=on or the request asks", () => {
    expect(plan({})).toEqual({ use: false, why: "unasked", namespace: DEFAULT_NAMESPACE });
    expect(plan({}, ON)).toEqual(USE);
    expect(plan({ "x-slotgate-cache": "on" })).toEqual(OPTED);
    expect(plan({ "x-slotgate-cache": " ON " })).toEqual(OPTED);
  });

  it("off, and cf-aig-skip-cache: true, turn it off even under CACHE=on", () => {
    expect(plan({ "x-slotgate-cache": "off" }, ON)).toMatchObject({ use: false, why: "off" });
    expect(plan({ "cf-aig-skip-cache": "true" }, ON)).toMatchObject({ use: false, why: "off" });
    expect(plan({ "cf-aig-skip-cache": "false" }, ON)).toEqual(USE);
    // The gateway's own header is the more specific: it wins over the alias.
    expect(plan({ "cf-aig-skip-cache": "true", "x-slotgate-cache": "on" })).toEqual(OPTED);
  });

  it("only and only-if-cached replay only and never write", () => {
    const only = { ...OPTED, write: false, only: true };
    expect(plan({ "x-slotgate-cache": "only" })).toEqual(only);
    expect(plan({ "cache-control": "only-if-cached" })).toEqual(only);
    expect(plan({ "cache-control": "only-if-cached", "x-slotgate-cache": "on" })).toEqual(OPTED);
    expect(plan({ "cache-control": "only-if-cached", "x-slotgate-cache": "off" })).toMatchObject({ use: false });
  });

  it("only inference requests are cached: anything else bypasses, and replay only on it is refused", () => {
    expect(plan({}, ON, false)).toEqual({ use: false, why: "endpoint", namespace: DEFAULT_NAMESPACE });
    expect(plan({ "x-slotgate-cache": "on" }, OFF, false)).toMatchObject({ use: false, why: "endpoint" });
    expect(plan({ "x-slotgate-cache": "only" }, OFF, false)).toMatch(/only inference requests/);
    expect(plan({ "cache-control": "only-if-cached" }, OFF, false)).toMatch(/only inference requests/);
    // Turned off, it is off whatever the endpoint: nothing to refuse.
    expect(plan({ "x-slotgate-cache": "off" }, ON, false)).toMatchObject({ use: false, why: "off" });
  });
});

describe("cachePlan: RFC 9111 request directives", () => {
  it("no-cache skips the lookup and still stores; no-store reads and never writes", () => {
    expect(plan({ "cache-control": "no-cache" }, ON)).toEqual({ ...USE, read: false });
    expect(plan({ "cache-control": "no-store" }, ON)).toEqual({ ...USE, write: false });
    expect(plan({ "cache-control": "No-Cache, NO-STORE" }, ON)).toEqual({ ...USE, read: false, write: false });
  });

  it("max-age=N, quoted or not", () => {
    expect(plan({ "cache-control": "max-age=60" }, ON)).toEqual({ ...USE, maxAgeS: 60 });
    expect(plan({ "cache-control": 'max-age="0"' }, ON)).toEqual({ ...USE, maxAgeS: 0 });
    expect(plan({ "cache-control": "max-age=soon" }, ON)).toMatch(/max-age/);
    expect(plan({ "cache-control": "max-age=-1" }, ON)).toMatch(/max-age/);
  });

  it("only with no-cache is a contradiction, refused", () => {
    expect(plan({ "x-slotgate-cache": "only", "cache-control": "no-cache" })).toMatch(/contradict/);
  });

  it("parseCacheControl reads names case-blind, with or without arguments, and skips junk", () => {
    expect([...parseCacheControl('no-cache, Max-Age = 5, x="a b", ;;')]).toEqual([["no-cache", null], ["max-age", "5"], ["x", "a b"]]);
    expect(parseCacheControl(null).size).toBe(0);
  });
});

describe("cachePlan: ttl, namespace, sample", () => {
  it("x-slotgate-cache-ttl, else cf-aig-cache-ttl, else CACHE_TTL_S; capped at the documented maximum", () => {
    expect(plan({ "x-slotgate-cache-ttl": "60" }, ON)).toMatchObject({ ttlS: 60 });
    expect(plan({ "cf-aig-cache-ttl": "120" }, ON)).toMatchObject({ ttlS: 120 });
    expect(plan({ "x-slotgate-cache-ttl": "60", "cf-aig-cache-ttl": "120" }, ON)).toMatchObject({ ttlS: 60 });
    expect(plan({ "x-slotgate-cache-ttl": String(MAX_TTL_S * 10) }, ON)).toMatchObject({ ttlS: MAX_TTL_S });
    // Opted in while CACHE is off: a day at most, whatever the request or CACHE_TTL_S says.
    expect(plan({ "x-slotgate-cache": "on", "x-slotgate-cache-ttl": String(MAX_TTL_S) }, OFF)).toMatchObject({ ttlS: 86_400 });
    expect(plan({ "x-slotgate-cache": "on" }, OFF)).toMatchObject({ ttlS: 86_400 });
    expect(plan({ "x-slotgate-cache": "on", "x-slotgate-cache-ttl": "60" }, OFF)).toMatchObject({ ttlS: 60 });
    for (const bad of ["0", "-5", "1.5", "ten", ""]) expect(plan({ "x-slotgate-cache-ttl": bad }, ON)).toMatch(/x-slotgate-cache-ttl/);
  });

  it("namespace and sample", () => {
    expect(plan({ "x-slotgate-cache-namespace": "run-42/v2", "x-slotgate-cache-sample": "3" }, ON)).toMatchObject({ namespace: "run-42/v2", sample: 3 });
    expect(plan({ "x-slotgate-cache-namespace": "a b" }, ON)).toMatch(/namespace/);
    expect(plan({ "x-slotgate-cache-namespace": "x".repeat(129) }, ON)).toMatch(/namespace/);
    expect(plan({ "x-slotgate-cache-sample": "-1" }, ON)).toMatch(/sample/);
    expect(plan({ "x-slotgate-cache-sample": "1e3" }, ON)).toMatch(/sample/);
  });

  it("malformed headers are refused whether or not the cache is in play", () => {
    expect(plan({ "x-slotgate-cache": "maybe" })).toMatch(/on, off or only/);
    expect(plan({ "cf-aig-skip-cache": "yes" })).toMatch(/true or false/);
    expect(plan({ "x-slotgate-cache-sample": "x" })).toMatch(/sample/);
  });
});
