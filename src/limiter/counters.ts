import type { OutcomeClass } from "../policy/types";
import type { Tokens } from "../usage/tokens";
import type { Ended } from "../usage/types";
import type { ChangeReason } from "./aimd";

/**
 * Monotonic per-key counters for the Prometheus exposition, beside the core's own metrics (which
 * the lead's limiter owns and the contract's JSON shows). Pure; the object updates them on
 * settle, grant, queue time-out, limit change and lease expiry, and persists them with the rest.
 */

export const OUTCOME_CLASSES: readonly OutcomeClass[] = ["success", "rate_limit", "capacity", "hard_quota", "transient", "too_large", "fatal"];
export const RETRY_CLASSES = ["rate_limit", "capacity", "transient"] as const;
export const CHANGE_REASONS: readonly ChangeReason[] = ["slow_start", "steady_up", "pace", "rate_limit", "quota", "manual"];
/** Gateway errors a limiter sees itself; the Worker's own (limiter_unavailable, ...) are logged there. */
export const OBJECT_ERRORS = ["queue_timeout"] as const;

/** Upper bounds in seconds; +Inf is implied. LLM answers take from tens of ms to minutes. */
export const LATENCY_BOUNDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Most grants wait nothing; a queued one waits for a slot, a gate or a quota refill. */
export const WAIT_BOUNDS = [0.001, 0.01, 0.05, 0.25, 1, 5, 15, 60, 120];

/** The OpenTelemetry GenAI conventions' buckets: gen_ai.client.token.usage and gen_ai.client.operation.duration (seconds). */
export const TOKEN_BOUNDS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const OPERATION_BOUNDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
/** Label sets per key in each gen_ai family; past it, new models (and errors) count as `_OTHER`. */
export const GENAI_SERIES_MAX = 16;

export interface Histogram {
  /** Per bucket (not cumulative), one more than the bounds: the last is +Inf. */
  counts: number[];
  /** Seconds. */
  sum: number;
  count: number;
}

export interface Counters {
  /** Requests by the class of their last upstream attempt (the one the caller got). */
  requests: Record<OutcomeClass, number>;
  /** Every upstream attempt, by class. */
  attempts: Record<OutcomeClass, number>;
  /** Attempts the gateway tried again, by the class that made it retry. */
  retries: Record<(typeof RETRY_CLASSES)[number], number>;
  gatewayErrors: Record<(typeof OBJECT_ERRORS)[number], number>;
  limitChanges: Record<ChangeReason, number>;
  leasesExpired: number;
  /** Calls into the object on the hot path (exchange, acquire, settle, release, renew, cancel). */
  calls: number;
  /** Operations those calls carried: more ops than calls is what batching saved. */
  ops: number;
  latency: Histogram;
  queueWait: Histogram;
  /** Tokens the key's answers reported (cached and cacheWrite are parts of input). */
  tokens: { input: number; output: number; cached: number; cacheWrite: number };
  /** What those tokens cost at the price table (priced answers only). */
  costUsd: number;
  /**
   * The gen_ai.client.* histograms, per label set `<operation>\n<model named>\n<type>`: `type` is
   * the token type (input, output) or the operation's error.type ("" when it succeeded).
   */
  genai: { tokens: Record<string, Histogram>; duration: Record<string, Histogram> };
}

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
const emptyHistogram = (bounds: readonly number[]): Histogram => ({ counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 });

export function emptyCounters(): Counters {
  return {
    requests: zeros(OUTCOME_CLASSES),
    attempts: zeros(OUTCOME_CLASSES),
    retries: zeros(RETRY_CLASSES),
    gatewayErrors: zeros(OBJECT_ERRORS),
    limitChanges: zeros(CHANGE_REASONS),
    leasesExpired: 0,
    calls: 0,
    ops: 0,
    latency: emptyHistogram(LATENCY_BOUNDS),
    queueWait: emptyHistogram(WAIT_BOUNDS),
    tokens: { input: 0, output: 0, cached: 0, cacheWrite: 0 },
    costUsd: 0,
    genai: { tokens: {}, duration: {} },
  };
}

function observe(h: Histogram, bounds: readonly number[], seconds: number): void {
  if (!Number.isFinite(seconds) || seconds < 0) return;
  let i = 0;
  while (i < bounds.length && seconds > bounds[i]!) i++;
  h.counts[i] = (h.counts[i] ?? 0) + 1;
  h.sum += seconds;
  h.count += 1;
}

export function countAttempt(c: Counters, a: { cls: OutcomeClass; final: boolean; latencyMs: number }): void {
  c.attempts[a.cls] += 1;
  if (a.final) c.requests[a.cls] += 1;
  else if (a.cls === "rate_limit" || a.cls === "capacity" || a.cls === "transient") c.retries[a.cls] += 1;
  observe(c.latency, LATENCY_BOUNDS, a.latencyMs / 1_000);
}

export function countGrant(c: Counters, waitedMs: number): void {
  observe(c.queueWait, WAIT_BOUNDS, waitedMs / 1_000);
}

export function countQueueTimeout(c: Counters): void {
  c.gatewayErrors.queue_timeout += 1;
}

export function countLimitChange(c: Counters, reason: ChangeReason): void {
  if (reason in c.limitChanges) c.limitChanges[reason] += 1;
}

export function countUsage(c: Counters, t: Counters["tokens"] | null, costUsd: number | null): void {
  if (t) for (const k of ["input", "output", "cached", "cacheWrite"] as const) c.tokens[k] += t[k];
  c.costUsd += costUsd ?? 0;
}

function genaiSeries(m: Record<string, Histogram>, bounds: readonly number[], op: string, model: string, type: string): Histogram {
  let k = `${op}\n${model}\n${type}`;
  if (!m[k] && Object.keys(m).length >= GENAI_SERIES_MAX) k = `${op}\n_OTHER\n${type === "" || type === "input" || type === "output" ? type : "_OTHER"}`;
  return (m[k] ??= emptyHistogram(bounds));
}

/** A GenAI operation's end: its duration, and its tokens when its answer reported them. */
export function countOperation(c: Counters, e: Ended, t: Tokens | null): void {
  observe(genaiSeries(c.genai.duration, OPERATION_BOUNDS, e.op, e.model, e.error ?? ""), OPERATION_BOUNDS, e.ms / 1_000);
  if (t) for (const type of ["input", "output"] as const) observe(genaiSeries(c.genai.tokens, TOKEN_BOUNDS, e.op, e.model, type), TOKEN_BOUNDS, t[type]);
}

export function countLeasesExpired(c: Counters, n: number): void {
  c.leasesExpired += n;
}

/** Cumulative bucket counts, as the exposition wants them. */
export function cumulative(h: Histogram): number[] {
  let run = 0;
  return h.counts.map((n) => (run += n));
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

function mergeRecord<K extends string>(base: Record<K, number>, saved: unknown): Record<K, number> {
  const s = (saved ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(base) as K[]) base[k] = num(s[k]);
  return base;
}

function mergeHistogram(base: Histogram, saved: unknown): Histogram {
  const s = saved as Partial<Histogram> | undefined;
  // A stored histogram with another bucket layout (an older release) starts over: a counter reset.
  if (!s || !Array.isArray(s.counts) || s.counts.length !== base.counts.length) return base;
  return { counts: s.counts.map(num), sum: num(s.sum), count: num(s.count) };
}

/** Reads a stored row leniently: fields added since it was written start at zero. */
export function restoreCounters(saved: unknown): Counters {
  const c = emptyCounters();
  if (typeof saved !== "object" || saved === null) return c;
  const s = saved as Record<string, unknown>;
  mergeRecord(c.requests, s.requests);
  mergeRecord(c.attempts, s.attempts);
  mergeRecord(c.retries, s.retries);
  mergeRecord(c.gatewayErrors, s.gatewayErrors);
  mergeRecord(c.limitChanges, s.limitChanges);
  c.leasesExpired = num(s.leasesExpired);
  c.calls = num(s.calls);
  c.ops = num(s.ops);
  c.latency = mergeHistogram(c.latency, s.latency);
  c.queueWait = mergeHistogram(c.queueWait, s.queueWait);
  mergeRecord(c.tokens, s.tokens);
  c.costUsd = num(s.costUsd);
  const g = (s.genai ?? {}) as Record<string, unknown>;
  for (const [family, bounds] of [["tokens", TOKEN_BOUNDS], ["duration", OPERATION_BOUNDS]] as const)
    for (const [k, h] of Object.entries((g[family] ?? {}) as Record<string, unknown>).slice(0, GENAI_SERIES_MAX)) c.genai[family][k] = mergeHistogram(emptyHistogram(bounds), h);
  return c;
}
