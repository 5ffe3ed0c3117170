import type { Env } from "../env";
import { checkBounds, DEFAULT_GATEWAY, DEFAULT_LIMITER, type GatewayConfig, type LimiterConfig } from "./limits";

/** A var the operator set to something unusable: the gateway says which, rather than guessing. */
export class ConfigError extends Error {}

function num(env: Env, name: keyof Env, fallback: number, lo: number, hi: number, int = true): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < lo || n > hi || (int && !Number.isInteger(n)))
    throw new ConfigError(`${name} must be ${int ? "an integer" : "a number"} in [${lo}, ${hi}], got ${JSON.stringify(raw)}`);
  return n;
}

export function limiterConfigFromEnv(env: Env): LimiterConfig {
  const c: LimiterConfig = {
    minConcurrency: num(env, "MIN_CONCURRENCY", DEFAULT_LIMITER.minConcurrency, 1, 100_000),
    startConcurrency: num(env, "START_CONCURRENCY", DEFAULT_LIMITER.startConcurrency, 1, 100_000),
    maxConcurrency: num(env, "MAX_CONCURRENCY", DEFAULT_LIMITER.maxConcurrency, 1, 100_000),
    decreaseFactor: num(env, "DECREASE_FACTOR", DEFAULT_LIMITER.decreaseFactor, 0.01, 0.99, false),
    scaleUpPercent: num(env, "SCALE_UP_PERCENT", DEFAULT_LIMITER.scaleUpPercent, 1, 100, false),
    cooldownMs: num(env, "COOLDOWN_MS", DEFAULT_LIMITER.cooldownMs, 0, 86_400_000),
    leaseTtlMs: num(env, "LEASE_TTL_MS", DEFAULT_LIMITER.leaseTtlMs, 1_000, 86_400_000),
  };
  const bad = checkBounds(c);
  if (bad) throw new ConfigError(bad.replace(/minConcurrency|startConcurrency|maxConcurrency/g, (m) => toVar(m)));
  return c;
}

/** Durable Object location hints, as Cloudflare names them. */
export const LOCATIONS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"] as const;
export type Location = (typeof LOCATIONS)[number];

/** `LIMITER_LOCATION`: a hint for where a key's Limiter is created; unset or empty: none. */
export function limiterLocation(env: Env): Location | undefined {
  const raw = env.LIMITER_LOCATION?.trim();
  if (!raw) return undefined;
  if (!(LOCATIONS as readonly string[]).includes(raw)) throw new ConfigError(`LIMITER_LOCATION must be one of ${LOCATIONS.join(", ")}, got ${JSON.stringify(raw)}`);
  return raw as Location;
}

const gatewayConfigs = new WeakMap<Env, GatewayConfig>();

/** `gatewayConfigFromEnv`, once per isolate's env (vars cannot change without a new isolate). */
export function gatewayConfigOf(env: Env): GatewayConfig {
  let c = gatewayConfigs.get(env);
  if (!c) gatewayConfigs.set(env, (c = gatewayConfigFromEnv(env)));
  return c;
}

export function gatewayConfigFromEnv(env: Env): GatewayConfig {
  return {
    maxAttempts: num(env, "MAX_ATTEMPTS", DEFAULT_GATEWAY.maxAttempts, 1, 100),
    baseBackoffMs: num(env, "BASE_BACKOFF_MS", DEFAULT_GATEWAY.baseBackoffMs, 0, 600_000),
    maxBackoffMs: num(env, "MAX_BACKOFF_MS", DEFAULT_GATEWAY.maxBackoffMs, 0, 3_600_000),
    deadlineMs: num(env, "DEADLINE_MS", DEFAULT_GATEWAY.deadlineMs, 1, 86_400_000),
    maxBodyBytes: num(env, "MAX_BODY_BYTES", DEFAULT_GATEWAY.maxBodyBytes, 1, 100 * 1024 * 1024),
  };
}

function toVar(field: string): string {
  return field.replace(/[A-Z]/g, (ch) => `_${ch}`).toUpperCase();
}
