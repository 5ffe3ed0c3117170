// The variables the request path reads, checked before anything else is: each parser keeps its
// result per isolate (vars cannot change within one), so this is a handful of lookups a request.
import { type CacheConfig, cacheConfigOf } from "../cache/config";
import { checkLimiterEnv, ConfigError, gatewayConfigOf, type Location, limiterLocation } from "../config/env";
import type { GatewayConfig } from "../config/limits";
import type { Env } from "../env";
import { providers } from "../providers/registry";
import type { Provider } from "../providers/table";
import { readTraceConfig, type TraceConfig } from "../observe/otel-config";
import { type LaneTiers, laneTiers } from "../tiers/choose";
import { type PriceTable, priceTable } from "../usage/prices";
import { checkWeights } from "./caller";
import { gatewayError } from "./errors";

export interface Settings {
  table: Record<string, Provider>;
  gw: GatewayConfig;
  cache: CacheConfig;
  prices: PriceTable;
  location: Location | undefined;
  /** OTEL_*: null when tracing is off. */
  trace: TraceConfig | null;
  /** TIERS: the service tier each lane goes at by default. */
  tiers: LaneTiers;
  /** STATS_FLUSH_MS: how long an isolate gathers its counts (cache results, upstream attempts) before one call sends them; undefined: each its own default. */
  statsMs: number | undefined;
}

/** STATS_FLUSH_MS, 0 to 60,000 ms; unset or malformed: undefined (the defaults). Statistics only, so a bad value is no config_error. */
function statsFlushMs(raw: string | undefined): number | undefined {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isInteger(n) && n >= 0 ? Math.min(n, 60_000) : undefined;
}

/** An isolate's env does not change: its settings are read once (a malformed one, on every request, as it fails). */
const known = new WeakMap<Env, Settings>();

/** The settings, or 500 `config_error` naming the malformed variable. */
export function settingsOf(env: Env): Settings | Response {
  const hit = known.get(env);
  if (hit) return hit;
  try {
    const settings = {
      table: providers(env.PROVIDERS), prices: priceTable(env.PRICES), gw: gatewayConfigOf(env), cache: cacheConfigOf(env), location: limiterLocation(env), trace: readTraceConfig(env),
      tiers: laneTiers(env.TIERS), statsMs: statsFlushMs(env.STATS_FLUSH_MS),
    };
    checkLimiterEnv(env);
    checkWeights(env.PRIORITY_WEIGHTS);
    known.set(env, settings);
    return settings;
  } catch (err) {
    if (err instanceof ConfigError) return gatewayError("config_error", err.message);
    throw err;
  }
}
