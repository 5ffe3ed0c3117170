import type { OwnedObjects } from "./batches/owned";
import type { Budget } from "./budget/object";
import type { CacheShard } from "./cache/object";
import type { Directory } from "./directory/object";
import type { VirtualKeys } from "./keys/object";
import type { KeySlots } from "./keys/slots-object";
import type { Limiter } from "./limiter/object";

/** Bindings, vars and secrets as wrangler.toml and `wrangler secret put` declare them. */
export interface Env {
  LIMITER: DurableObjectNamespace<Limiter>;
  /** The Worker's static assets (assets/): the dashboard's files, served by the admin routes. */
  ASSETS: Fetcher;
  /** One instance (`directory`): which keys exist, for the admin list. */
  DIRECTORY: DurableObjectNamespace<Directory>;
  /** The response cache's shards: in-flight map, index and counters. */
  CACHE_SHARD: DurableObjectNamespace<CacheShard>;
  /** The response cache's bodies. */
  CACHE_BUCKET: R2Bucket;
  /** The usage ledger (minute rollups); unbound: usage is only counted in the metrics. */
  LEDGER?: D1Database;
  /** One per virtual key with a budget: its spend and reservations. */
  BUDGETS: DurableObjectNamespace<Budget>;
  /** JSON object (or a string holding one) adding or overriding model prices (USD per million tokens). */
  PRICES?: string | Record<string, unknown>;
  /** ms a limiter gathers usage before writing it to the ledger (default 10000). */
  USAGE_FLUSH_MS?: string;
  /** ms a Worker isolate gathers its counts (cache results, upstream attempts) before one call sends them (defaults 1000 and 2000). */
  STATS_FLUSH_MS?: string;
  /** The virtual keys, by their HMAC: 16 shards (`virtual-keys-0` to `-f`), and the old instance `virtual-keys` (keys/store.ts). */
  VIRTUAL_KEYS: DurableObjectNamespace<VirtualKeys>;
  /** One per virtual key with a maxConcurrency: its slots across the whole pool. */
  KEY_SLOTS: DurableObjectNamespace<KeySlots>;
  /** One per virtual key that used the batch or file endpoints: what it made, on which member, and its metered results. */
  BATCH_BOOKS: DurableObjectNamespace<OwnedObjects>;
  MIN_CONCURRENCY?: string;
  START_CONCURRENCY?: string;
  MAX_CONCURRENCY?: string;
  DECREASE_FACTOR?: string;
  SCALE_UP_PERCENT?: string;
  COOLDOWN_MS?: string;
  MAX_ATTEMPTS?: string;
  BASE_BACKOFF_MS?: string;
  MAX_BACKOFF_MS?: string;
  DEADLINE_MS?: string;
  LEASE_TTL_MS?: string;
  MAX_BODY_BYTES?: string;
  /** ms an upstream attempt may wait for its response headers; a time-out is transient (retried). */
  UPSTREAM_TIMEOUT_MS?: string;
  /** ms a streamed answer may go without a chunk before it is cut. */
  STREAM_IDLE_MS?: string;
  /** Bytes of request bodies one isolate may hold while they wait (memory bound). */
  BODY_BUDGET_BYTES?: string;
  /** JSON object (or a string holding one) adding or overriding providers. */
  PROVIDERS?: string | Record<string, unknown>;
  /** `high:normal:low` weights of the priority lanes (default 8:4:1). */
  PRIORITY_WEIGHTS?: string;
  /** JSON: the service tier each lane's requests go at by default, e.g. `{"low":"flex"}`. */
  TIERS?: string | Record<string, unknown>;
  /** `error`, `warn`, `info` (default) or `debug`: which event lines the limiters write. */
  LOG_LEVEL?: string;
  /** Where new Limiter objects are created (a Durable Object location hint); unset: near the first caller. */
  LIMITER_LOCATION?: string;
  /** `on`: every request uses the response cache unless it says otherwise (default `off`). */
  CACHE?: string;
  /** Seconds an entry is kept when the request does not say (default 7 days, at most 30). */
  CACHE_TTL_S?: string;
  /** The largest answer stored, in bytes (default 2 MiB). */
  CACHE_MAX_BYTES?: string;
  /** JSON: pools of provider keys, each member's key in the Worker secret it names. */
  POOLS?: string | Record<string, unknown>;
  /** ms a pool member is out after hard quota, 401 or 403, the first time (doubling per strike). */
  POOL_OUT_MS?: string;
  /**
   * Traces (src/observe/otel-config.ts), OpenTelemetry's own variables: off unless an endpoint is set.
   * OTEL_EXPORTER_OTLP_HEADERS (and _TRACES_HEADERS) is a secret.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_EXPORTER_OTLP_TRACES_HEADERS?: string;
  OTEL_EXPORTER_OTLP_TIMEOUT?: string;
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?: string;
  OTEL_TRACES_SAMPLER?: string;
  OTEL_TRACES_SAMPLER_ARG?: string;
  OTEL_TRACES_EXPORTER?: string;
  OTEL_SDK_DISABLED?: string;
  OTEL_SERVICE_NAME?: string;
  OTEL_RESOURCE_ATTRIBUTES?: string;
  OTEL_BSP_SCHEDULE_DELAY?: string;
  OTEL_BSP_MAX_QUEUE_SIZE?: string;
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE?: string;
  ADMIN_TOKEN?: string;
  GATEWAY_TOKENS?: string;
  /** The HMAC key of virtual keys (default: ADMIN_TOKEN). */
  VIRTUAL_KEY_SECRET?: string;
}
