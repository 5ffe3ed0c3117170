import { CHANGE_REASONS, cumulative, type Histogram, LATENCY_BOUNDS, OBJECT_ERRORS, OPERATION_BOUNDS, OUTCOME_CLASSES, RETRY_CLASSES, TOKEN_BOUNDS, WAIT_BOUNDS } from "../limiter/counters";
import type { KeyMetrics } from "../limiter/telemetry";
import { providerName } from "./genai";
import { STATUS_CLASSES, type StatusClass } from "./upstream";

/**
 * `GET /admin/metrics` as Prometheus text exposition (format 0.0.4). Pure: it renders what the
 * route gathered. Names follow Prometheus conventions: `slotgate_` prefix, base units (seconds),
 * `_total` counters, histograms as `_bucket`/`_sum`/`_count`. Per-key labels are provider, model
 * and key_hash (the credential's hash, never the credential), and for a pool member's key pool and
 * member (names from POOLS); other labels take fixed words only.
 */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface KeySeries extends KeyMetrics {
  key: string;
  provider: string;
  model: string;
  /** Epoch ms. */
  lastSeen: number | null;
  /** A pool member's key: the pool's and the member's names (config names, never a secret). */
  pool?: { pool: string; member: string };
}

export interface ScrapeInfo {
  /** Keys the Directory knows. */
  known: number;
  /** Keys past the export bound (the least recently seen). */
  omitted: number;
  /** Keys within the bound whose limiter did not answer in time. */
  unanswered: number;
  durationSeconds: number;
  /** The response cache's totals; null when its shards did not answer in time. */
  cache?: { hits: number; misses: number; collapsed: number; bypassed: number; entries: number; bytes: number } | null;
  /** Every key's upstream attempts by provider and status class (the Directory's counts); null when it did not answer. */
  upstream?: { provider: string; counts: Record<StatusClass, number> }[] | null;
}

type Labels = Record<string, string>;

/** Label values escape backslash, double quote and newline; nothing else needs it. */
export function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function formatValue(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Number.POSITIVE_INFINITY) return "+Inf";
  if (n === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(n);
}

function labelText(l: Labels): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

/** The part of a key after its last colon: the credential hash. */
export function keyHash(key: string): string {
  return key.slice(key.lastIndexOf(":") + 1);
}

class Writer {
  readonly lines: string[] = [];
  family(name: string, type: "gauge" | "counter" | "histogram", help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }
  sample(name: string, labels: Labels, value: number): void {
    this.lines.push(`${name}${labelText(labels)} ${formatValue(value)}`);
  }
}

type PerKey = (w: Writer, name: string, base: Labels, k: KeySeries) => void;

const gauge = (pick: (k: KeySeries) => number | null): PerKey => (w, name, base, k) => {
  const v = pick(k);
  if (v !== null) w.sample(name, base, v);
};

const byLabel =
  <K extends string>(label: string, keys: readonly K[], pick: (k: KeySeries) => Record<K, number>): PerKey =>
  (w, name, base, k) => {
    const rec = pick(k);
    for (const key of keys) w.sample(name, { ...base, [label]: key }, rec[key]);
  };

const quota = (field: "limit" | "remaining"): PerKey => (w, name, base, k) => {
  for (const window of ["requests", "tokens", "output"] as const) {
    const q = k.quotas[window];
    const v = q?.[field];
    if (typeof v === "number") w.sample(name, { ...base, window }, v);
  }
};

function histogramOf(w: Writer, name: string, base: Labels, bounds: readonly number[], h: Histogram): void {
  const cum = cumulative(h);
  bounds.forEach((b, i) => w.sample(`${name}_bucket`, { ...base, le: formatValue(b) }, cum[i] ?? 0));
  w.sample(`${name}_bucket`, { ...base, le: "+Inf" }, h.count);
  w.sample(`${name}_sum`, base, h.sum);
  w.sample(`${name}_count`, base, h.count);
}

const histogram = (bounds: readonly number[], pick: (k: KeySeries) => Histogram): PerKey => (w, name, base, k) => histogramOf(w, name, base, bounds, pick(k));

/**
 * A gen_ai.client.* histogram per label set the key has seen (counters.ts): the per-key labels
 * plus the OpenTelemetry attributes as Prometheus names them (dots to underscores).
 */
const genai = (bounds: readonly number[], pick: (k: KeySeries) => Record<string, Histogram> | undefined, typeLabel: string): PerKey => (w, name, base, k) => {
  for (const [set, h] of Object.entries(pick(k) ?? {})) {
    const [a, b] = [set.indexOf("\n"), set.lastIndexOf("\n")];
    const type = set.slice(b + 1);
    const labels = { ...base, gen_ai_operation_name: set.slice(0, a), gen_ai_provider_name: providerName(k.provider), gen_ai_request_model: set.slice(a + 1, b), ...(type && { [typeLabel]: type }) };
    histogramOf(w, name, labels, bounds, h);
  }
};

/** Every per-key family, in output order. Each key has a fixed number of series in each. */
const FAMILIES: [string, "gauge" | "counter" | "histogram", string, PerKey][] = [
  ["slotgate_concurrency_limit", "gauge", "The key's adaptive concurrency limit.", gauge((k) => k.limit)],
  ["slotgate_requests_in_flight", "gauge", "Slots held now (upstream attempts and answers still streaming).", gauge((k) => k.inFlight)],
  ["slotgate_requests_queued", "gauge", "Requests waiting for a slot.", gauge((k) => k.queued)],
  ["slotgate_quota_limit", "gauge", "The provider's limit per window as last reported (requests, tokens, or generated tokens alone: output).", quota("limit")],
  ["slotgate_quota_remaining", "gauge", "What the limiter predicts is left in the window now.", quota("remaining")],
  ["slotgate_send_gate_seconds", "gauge", "Seconds until the key's shared send gate opens (0: open).", gauge((k) => k.gateSeconds)],
  ["slotgate_key_last_seen_timestamp_seconds", "gauge", "When the key last had a request, Unix time.", gauge((k) => (k.lastSeen === null ? null : k.lastSeen / 1_000))],
  ["slotgate_requests_total", "counter", "Requests by the class of the upstream attempt the caller got.", byLabel("class", OUTCOME_CLASSES, (k) => k.counters.requests)],
  ["slotgate_upstream_attempts_total", "counter", "Upstream attempts by outcome class.", byLabel("class", OUTCOME_CLASSES, (k) => k.counters.attempts)],
  ["slotgate_retries_total", "counter", "Attempts the gateway tried again, by the class that made it retry.", byLabel("class", RETRY_CLASSES, (k) => k.counters.retries)],
  ["slotgate_rate_limits_absorbed_total", "counter", "Upstream 429s the gateway retried instead of returning (retries_total{class=\"rate_limit\"}).", gauge((k) => k.counters.retries.rate_limit)],
  ["slotgate_gateway_errors_total", "counter", "Errors the key's limiter answered itself, by type.", byLabel("type", OBJECT_ERRORS, (k) => k.counters.gatewayErrors)],
  ["slotgate_limit_changes_total", "counter", "Concurrency limit changes by reason.", byLabel("reason", CHANGE_REASONS, (k) => k.counters.limitChanges)],
  ["slotgate_leases_expired_total", "counter", "Slots returned by expiry because their Worker never released them.", gauge((k) => k.counters.leasesExpired)],
  ["slotgate_limiter_calls_total", "counter", "Calls Workers made into the key's limiter object on the request path (one may carry many operations).", gauge((k) => k.counters.calls)],
  ["slotgate_limiter_ops_total", "counter", "Operations (acquire, settle, release, renew, cancel) those calls carried.", gauge((k) => k.counters.ops)],
  ["slotgate_log_lines_dropped_total", "counter", "Event lines not written because of the log rate bound.", gauge((k) => k.logLinesDropped)],
  ["slotgate_tokens_total", "counter", "Tokens the key's answers reported, by direction (cached and cache_write are parts of input).",
    byLabel("direction", ["input", "output", "cached", "cache_write"] as const, ({ counters: { tokens: t } }) => ({ input: t.input, output: t.output, cached: t.cached, cache_write: t.cacheWrite }))],
  ["slotgate_cost_usd_total", "counter", "USD the key's answers cost at the price table (unpriced models add nothing).", gauge((k) => k.counters.costUsd)],
  ["slotgate_upstream_latency_seconds", "histogram", "Upstream attempt latency, to the response headers.", histogram(LATENCY_BOUNDS, (k) => k.counters.latency)],
  ["slotgate_queue_wait_seconds", "histogram", "Time a granted request waited for its slot.", histogram(WAIT_BOUNDS, (k) => k.counters.queueWait)],
  ["gen_ai_client_token_usage", "histogram", "OpenTelemetry's gen_ai.client.token.usage: input and output tokens of each answer that reported them.", genai(TOKEN_BOUNDS, (k) => k.counters.genai?.tokens, "gen_ai_token_type")],
  ["gen_ai_client_operation_duration_seconds", "histogram", "OpenTelemetry's gen_ai.client.operation.duration: a request's arrival to its answer's end (error_type: how it failed).", genai(OPERATION_BOUNDS, (k) => k.counters.genai?.duration, "error_type")],
];

export function render(keys: readonly KeySeries[], scrape: ScrapeInfo): string {
  const w = new Writer();
  const bases = keys.map((k) => ({ provider: k.provider, model: k.model, key_hash: keyHash(k.key), ...k.pool }));
  for (const [name, type, help, write] of FAMILIES) {
    w.family(name, type, help);
    keys.forEach((k, i) => write(w, name, bases[i]!, k));
  }
  w.family("slotgate_keys", "gauge", "Rate-limit keys the gateway knows (seen in the last 30 days).");
  w.sample("slotgate_keys", {}, scrape.known);
  w.family("slotgate_keys_exported", "gauge", "Keys with series in this scrape.");
  w.sample("slotgate_keys_exported", {}, keys.length);
  w.family("slotgate_keys_omitted", "gauge", "Keys left out because of the export bound (the least recently seen).");
  w.sample("slotgate_keys_omitted", {}, scrape.omitted);
  w.family("slotgate_keys_unanswered", "gauge", "Keys within the bound whose limiter did not answer in time.");
  w.sample("slotgate_keys_unanswered", {}, scrape.unanswered);
  if (scrape.upstream) {
    w.family("slotgate_provider_attempts_total", "counter", "Upstream attempts of every key, listed or not, by provider and what came back: a status class, or unreachable (no response headers).");
    for (const p of scrape.upstream) for (const c of STATUS_CLASSES) w.sample("slotgate_provider_attempts_total", { provider: p.provider, status_class: c }, p.counts[c]);
  }
  if (scrape.cache) {
    const c = scrape.cache;
    w.family("slotgate_cache_requests_total", "counter", "Requests seen by the response cache, by result.");
    for (const [result, n] of [["hit", c.hits], ["miss", c.misses], ["collapsed", c.collapsed], ["bypass", c.bypassed]] as const)
      w.sample("slotgate_cache_requests_total", { result }, n);
    w.family("slotgate_cache_entries", "gauge", "Live entries in the response cache.");
    w.sample("slotgate_cache_entries", {}, c.entries);
    w.family("slotgate_cache_stored_bytes", "gauge", "Bytes of the live entries in the response cache.");
    w.sample("slotgate_cache_stored_bytes", {}, c.bytes);
  }
  w.family("slotgate_scrape_duration_seconds", "gauge", "How long this scrape took to gather.");
  w.sample("slotgate_scrape_duration_seconds", {}, scrape.durationSeconds);
  return `${w.lines.join("\n")}\n`;
}
