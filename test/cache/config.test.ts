import { describe, expect, it } from "vitest";
import { cacheConfigFromEnv, DEFAULT_CACHE, MAX_TTL_S } from "../../src/cache/config";
import { ConfigError } from "../../src/config/env";
import type { Env } from "../../src/env";

const env = (o: Partial<Env>) => o as Env;

describe("cacheConfigFromEnv", () => {
  it("defaults: off, 7 days, 2 MiB", () => {
    expect(cacheConfigFromEnv(env({}))).toEqual(DEFAULT_CACHE);
    expect(DEFAULT_CACHE).toEqual({ on: false, ttlS: 604_800, maxBytes: 2_097_152 });
  });
  it("reads CACHE, CACHE_TTL_S and CACHE_MAX_BYTES", () => {
    expect(cacheConfigFromEnv(env({ CACHE: "ON", CACHE_TTL_S: "60", CACHE_MAX_BYTES: "1024" }))).toEqual({ on: true, ttlS: 60, maxBytes: 1024 });
    expect(cacheConfigFromEnv(env({ CACHE: "off" })).on).toBe(false);
  });
  it("a bad value is a ConfigError naming the var; the TTL has a ceiling", () => {
    expect(() => cacheConfigFromEnv(env({ CACHE: "yes" }))).toThrow(ConfigError);
    expect(() => cacheConfigFromEnv(env({ CACHE: "yes" }))).toThrow(/CACHE must be on or off/);
    expect(() => cacheConfigFromEnv(env({ CACHE_TTL_S: String(MAX_TTL_S + 1) }))).toThrow(/CACHE_TTL_S/);
    expect(() => cacheConfigFromEnv(env({ CACHE_MAX_BYTES: "0" }))).toThrow(/CACHE_MAX_BYTES/);
  });
});
