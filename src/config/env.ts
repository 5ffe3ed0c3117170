import type { Env } from "../env";
import { checkBounds, DEFAULT_GATEWAY, DEFAULT_LIMITER, GATEWAY_RULES, type GatewayConfig, LIMITER_RULES, type LimiterConfig, outOfRange, type Rule } from "./limits";

/** A var the operator set to something unusable: the gateway says which, rather than guessing. */
export class ConfigError extends Error {}

/** A JSON-object variable (`PROVIDERS`, `POOLS`): the object, a string holding one, or unset/empty. */
export function jsonObjectVar(raw: unknown, name: string): Record<string, unknown> {
  let value = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return {};
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ConfigError(`${name} is not valid JSON`);
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new ConfigError(`${name} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The variable each setting is read from: `minConcurrency` comes from MIN_CONCURRENCY. */
function toVar(field: string): string {
  return field.replace(/[A-Z]/g, (ch) => `_${ch}`).toUpperCase();
}

/** Reads each field of `defaults` from its variable, checked against `rules`; never echoes the value. */
function fromEnv<T extends { [K in keyof T]: number }>(env: Env, defaults: T, rules: Record<keyof T, Rule>): T {
  const out = { ...defaults };
  for (const field of Object.keys(defaults) as (keyof T & string)[]) {
    const name = toVar(field);
    const raw = (env as unknown as Record<string, unknown>)[name];
    if (raw === undefined || raw === "") continue;
    const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
    const why = outOfRange(n, rules[field]);
    if (why) throw new ConfigError(`${name} ${why}`);
    (out as Record<keyof T, number>)[field] = n;
  }
  return out;
}

export function limiterConfigFromEnv(env: Env): LimiterConfig {
  const c = fromEnv(env, DEFAULT_LIMITER, LIMITER_RULES);
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
  if (!(LOCATIONS as readonly string[]).includes(raw)) throw new ConfigError(`LIMITER_LOCATION must be one of ${LOCATIONS.join(", ")}`);
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
  return fromEnv(env, DEFAULT_GATEWAY, GATEWAY_RULES);
}

const limiterConfigs = new WeakMap<Env, LimiterConfig>();

/**
 * The limiter's variables, checked by the Worker before any object is asked: a malformed one is a
 * `config_error` naming it, not a Limiter that fails to start (which would read as unavailable).
 */
export function checkLimiterEnv(env: Env): void {
  if (!limiterConfigs.has(env)) limiterConfigs.set(env, limiterConfigFromEnv(env));
}
