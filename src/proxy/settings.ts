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
      tiers: laneTiers(env.TIERS),
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
