import { ConfigError } from "../config/env";
import type { Env } from "../env";

/** The cache's vars, read once per isolate's env. */
export interface CacheConfig {
  /** `CACHE=on`: every request uses the cache unless it says otherwise. */
  on: boolean;
  /** `CACHE_TTL_S`: how long an entry is kept when the request does not say. */
  ttlS: number;
  /** `CACHE_MAX_BYTES`: the largest answer stored; larger ones pass through unstored. */
  maxBytes: number;
}

/** The documented ceiling of any TTL, whatever a request or `CACHE_TTL_S` asks for: 30 days. */
export const MAX_TTL_S = 30 * 86_400;

/**
 * While `CACHE` is off, anyone may still opt a request in (`x-slotgate-cache: on`): its entry is
 * kept at most a day, so what callers store without the operator's say-so is bounded in time.
 */
export const OPT_IN_MAX_TTL_S = 86_400;

export const DEFAULT_CACHE: CacheConfig = { on: false, ttlS: 7 * 86_400, maxBytes: 2 * 1024 * 1024 };

function int(env: Env, name: "CACHE_TTL_S" | "CACHE_MAX_BYTES", fallback: number, hi: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > hi) throw new ConfigError(`${name} must be an integer in [1, ${hi}], got ${JSON.stringify(raw)}`);
  return n;
}

export function cacheConfigFromEnv(env: Env): CacheConfig {
  const raw = (env.CACHE ?? "").trim().toLowerCase();
  if (raw !== "" && raw !== "on" && raw !== "off") throw new ConfigError(`CACHE must be on or off, got ${JSON.stringify(env.CACHE)}`);
  return {
    on: raw === "on",
    ttlS: int(env, "CACHE_TTL_S", DEFAULT_CACHE.ttlS, MAX_TTL_S),
    maxBytes: int(env, "CACHE_MAX_BYTES", DEFAULT_CACHE.maxBytes, 64 * 1024 * 1024),
  };
}

const configs = new WeakMap<Env, CacheConfig>();

export function cacheConfigOf(env: Env): CacheConfig {
  let c = configs.get(env);
  if (!c) configs.set(env, (c = cacheConfigFromEnv(env)));
  return c;
}
