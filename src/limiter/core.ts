import type { LimiterConfig, LimiterOverride } from "../config/limits";
import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import { type AimdState, cut, type HistoryEntry, initAimd, noteInFlight, onSuccess, onTransient, rebound, setManual } from "./aimd";
import { type Metrics, emptyMetrics, record } from "./metrics";
import { type Granted, type QuotaState, charge, emptyQuota, fitsAt, lowWater, observe } from "./quota";
import { type Waiter, WaitQueue } from "./queue";

export interface Lease {
  id: string;
  cost: number;
  expiresAt: number;
  /** The quota's grant totals just after this grant (in memory only; see quota.observe). */
  mark?: Granted;
}

export interface Outcome {
  cls: OutcomeClass;
  status: number;
  info: RateLimitInfo;
  latencyMs: number;
  attempt: number;
  final: boolean;
}

export type Admission = { kind: "queued" } | { kind: "rejected"; retryAfterMs: number };

/** What survives a restart: everything learned, nothing about who is waiting. */
export interface Persisted {
  aimd: AimdState;
  quota: QuotaState;
  cooldownUntil: number;
  metrics: Metrics;
  overrides: LimiterOverride;
}

/** How often a Worker renews a lease it holds; a restored lease is given about this long. */
export const renewEvery = (ttlMs: number) => Math.max(250, Math.floor(ttlMs / 3));

/** A 429 with no hint still holds everyone back briefly, so the burst behind it does not follow. */
export const NO_HINT_GATE_MS = 1_000;
const SETTLED_MEMORY = 2_048;

/**
 * The whole limiter as a pure state machine: the Durable Object (and the batch runner, in-process)
 * feed it calls and the time, and act on what it returns. It never reads a clock or does I/O.
 */
export class LimiterCore {
  readonly queue = new WaitQueue<Waiter>();
  readonly leases = new Map<string, Lease>();
  aimd: AimdState;
  quota: QuotaState;
  cooldownUntil = 0;
  metrics: Metrics;
  overrides: LimiterOverride = {};
  private settled = new Set<string>();
  private base: LimiterConfig;

  constructor(base: LimiterConfig, saved?: Persisted) {
    this.base = base;
    this.overrides = saved?.overrides ?? {};
    this.aimd = { ...initAimd(this.config), ...saved?.aimd };
    this.quota = { ...emptyQuota(), ...saved?.quota };
    this.cooldownUntil = saved?.cooldownUntil ?? 0;
    this.metrics = saved?.metrics ?? emptyMetrics();
    rebound(this.aimd, this.config, 0, 0);
  }

  get config(): LimiterConfig {
    const { limit: _limit, ...rest } = this.overrides;
    return { ...this.base, ...rest };
  }

  /** Vars may change between deploys; the learned limit stays but is kept within the new bounds. */
  setBase(base: LimiterConfig, now: number): void {
    this.base = base;
    rebound(this.aimd, this.config, now, this.inFlight);
  }

  get inFlight(): number {
    return this.leases.size;
  }

  persisted(): Persisted {
    return { aimd: this.aimd, quota: this.quota, cooldownUntil: this.cooldownUntil, metrics: this.metrics, overrides: this.overrides };
  }

  /** Earliest time a waiter of `cost` may be sent, as far as the send gate and quotas know. */
  private openAt(cost: number, now: number): number {
    return Math.max(this.cooldownUntil, fitsAt(this.quota, cost, now));
  }

  /** How long a refused caller should wait before trying again. */
  retryAfter(cost: number, now: number): number {
    const avg = this.metrics.latencyCount ? this.metrics.latencySum / this.metrics.latencyCount : 1_000;
    const queued = Math.ceil(this.queue.size / Math.max(1, this.aimd.limit)) * avg;
    const open = this.openAt(cost, now) - now;
    return Math.max(1_000, Math.ceil(Number.isFinite(open) ? Math.max(open, queued) : queued));
  }

  /** Queues a waiter, unless the gate or a quota will stay shut past its deadline. */
  enqueue(w: Waiter, now: number): Admission {
    const open = this.openAt(w.cost, now);
    if (open > w.deadline) return { kind: "rejected", retryAfterMs: this.retryAfter(w.cost, now) };
    this.queue.push(w);
    return { kind: "queued" };
  }

  /**
   * Grants, in order, every waiter that may go now, and expires the ones past their deadline.
   * Strict FIFO: a head that does not fit its quota holds the line, so large requests never starve.
   */
  pump(now: number): { granted: Waiter[]; expired: Waiter[] } {
    const expired = this.queue.takeExpired(now);
    const granted: Waiter[] = [];
    for (let head = this.queue.peek(); head; head = this.queue.peek()) {
      if (this.inFlight >= this.aimd.limit || this.openAt(head.cost, now) > now) break;
      this.queue.shift();
      this.grant(head.id, head.cost, now);
      granted.push(head);
    }
    return { granted, expired };
  }

  private grant(id: string, cost: number, now: number): void {
    const lease: Lease = { id, cost, expiresAt: now + this.config.leaseTtlMs };
    this.leases.set(id, lease);
    charge(this.quota, cost, now);
    lease.mark = { ...this.quota.granted };
    noteInFlight(this.aimd, this.inFlight);
  }

  /** When the next pump could change something: gate or quota opening, or a deadline. */
  wakeAt(now: number): number | null {
    const head = this.queue.peek();
    if (!head) return null;
    let at = this.queue.earliestDeadline() ?? Number.POSITIVE_INFINITY;
    if (this.inFlight < this.aimd.limit) at = Math.min(at, this.openAt(head.cost, now));
    return Number.isFinite(at) ? Math.max(at, now) : null;
  }

  /**
   * Feeds one upstream outcome to AIMD, the quota model, the shared gate and the metrics.
   * Returns the limit change it caused, if any. Idempotent per lease id.
   */
  settle(id: string, o: Outcome, now: number): HistoryEntry | null {
    if (this.settled.has(id)) return null;
    this.settled.add(id);
    if (this.settled.size > SETTLED_MEMORY) this.settled.delete(this.settled.values().next().value as string);

    record(this.metrics, o);
    observe(this.quota, o.info, now, this.leases.get(id)?.mark);
    let changed: HistoryEntry | null = null;
    if (o.cls === "success" && o.attempt <= 1) changed = onSuccess(this.aimd, this.config, now, this.inFlight);
    else if (o.cls === "transient") onTransient(this.aimd);
    else if (o.cls === "rate_limit") {
      changed = cut(this.aimd, this.config, "rate_limit", now, this.inFlight);
      this.cooldownUntil = Math.max(this.cooldownUntil, now + (o.info.retryAfterMs ?? NO_HINT_GATE_MS));
    }
    if (o.cls !== "rate_limit" && lowWater(this.quota, now))
      changed = cut(this.aimd, this.config, "quota", now, this.inFlight) ?? changed;
    return changed;
  }

  release(id: string): boolean {
    return this.leases.delete(id);
  }

  renew(id: string, now: number): boolean {
    const lease = this.leases.get(id);
    if (lease) lease.expiresAt = now + this.config.leaseTtlMs;
    return lease !== undefined;
  }

  cancel(id: string): Waiter | undefined {
    return this.queue.remove(id);
  }

  /** Drops leases whose holder never released them (a Worker that died mid-request). */
  expireLeases(now: number): Lease[] {
    const gone: Lease[] = [];
    for (const lease of this.leases.values())
      if (lease.expiresAt <= now) {
        this.leases.delete(lease.id);
        gone.push(lease);
      }
    return gone;
  }

  nextLeaseExpiry(): number | null {
    let min: number | null = null;
    for (const l of this.leases.values()) if (min === null || l.expiresAt < min) min = l.expiresAt;
    return min;
  }

  /** Applies a validated override; returns the reason it was refused, or null. */
  configure(override: LimiterOverride, now: number, check: (c: LimiterConfig) => string | null): string | null {
    const next = { ...this.overrides, ...override };
    const { limit: _limit, ...rest } = next;
    const merged = { ...this.base, ...rest };
    const bad = check(merged);
    if (bad) return bad;
    if (override.limit !== undefined && (override.limit < merged.minConcurrency || override.limit > merged.maxConcurrency))
      return `limit must lie within [${merged.minConcurrency}, ${merged.maxConcurrency}]`;
    const { limit, ...kept } = next;
    this.overrides = kept;
    rebound(this.aimd, this.config, now, this.inFlight);
    if (limit !== undefined) setManual(this.aimd, this.config, limit, now, this.inFlight);
    return null;
  }

  /** Back to defaults: overrides, learned limit, quotas, gate, metrics and history all cleared. */
  reset(): void {
    this.overrides = {};
    this.aimd = initAimd(this.config);
    this.quota = emptyQuota();
    this.cooldownUntil = 0;
    this.metrics = emptyMetrics();
  }
}
