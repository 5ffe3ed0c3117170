import type { OutcomeClass } from "../policy/types";

/** Latencies are kept for the last WINDOW attempts only, so percentiles follow the present. */
export const LATENCY_WINDOW = 512;

export interface Metrics {
  totalRequests: number;
  completedRequests: number;
  failedRequests: number;
  rateLimitHits: number;
  retriedRequests: number;
  latencySum: number;
  latencyCount: number;
  latencies: number[];
}

export function emptyMetrics(): Metrics {
  return {
    totalRequests: 0,
    completedRequests: 0,
    failedRequests: 0,
    rateLimitHits: 0,
    retriedRequests: 0,
    latencySum: 0,
    latencyCount: 0,
    latencies: [],
  };
}

export interface AttemptRecord {
  cls: OutcomeClass;
  attempt: number;
  /** The gateway will not try this request again: a non-success here is what the caller gets. */
  final: boolean;
  latencyMs: number;
}

export function record(m: Metrics, a: AttemptRecord): void {
  if (a.attempt <= 1) m.totalRequests += 1;
  else m.retriedRequests += 1;
  if (a.cls === "rate_limit") m.rateLimitHits += 1;
  if (a.cls === "success") m.completedRequests += 1;
  else if (a.final) m.failedRequests += 1;
  if (Number.isFinite(a.latencyMs) && a.latencyMs >= 0) {
    m.latencySum += a.latencyMs;
    m.latencyCount += 1;
    m.latencies.push(a.latencyMs);
    if (m.latencies.length > LATENCY_WINDOW) m.latencies.splice(0, m.latencies.length - LATENCY_WINDOW);
  }
}

/** Nearest-rank percentile of an ascending list; 0 when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? 0;
}

/** The mean latency of the answers so far (null: none yet). */
export function meanLatencyMs(m: Pick<Metrics, "latencySum" | "latencyCount">): number | null {
  return m.latencyCount === 0 ? null : m.latencySum / m.latencyCount;
}

export function summarize(m: Metrics) {
  const sorted = [...m.latencies].sort((a, b) => a - b);
  return {
    totalRequests: m.totalRequests,
    completedRequests: m.completedRequests,
    failedRequests: m.failedRequests,
    rateLimitHits: m.rateLimitHits,
    retriedRequests: m.retriedRequests,
    avgLatencyMs: Math.round(meanLatencyMs(m) ?? 0),
    p50LatencyMs: Math.round(percentile(sorted, 50)),
    p99LatencyMs: Math.round(percentile(sorted, 99)),
  };
}
