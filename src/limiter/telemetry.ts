import type { ChangeReason, HistoryEntry } from "./aimd";
import type { Lease, LimiterCore, Outcome } from "./core";
import { type Counters, countAttempt, countOperation, countGrant, countLeasesExpired, countLimitChange, countQueueTimeout, emptyCounters, restoreCounters } from "./counters";
import { available, type QuotaWindow } from "./quota";
import { emptyRing, type Levels, noteAttempt, noteLevels, type Point, restoreRing, type Ring, series } from "./samples";
import type { EventLog } from "../observe/emit";
import type { KeyMeta, SettleRequest } from "./types";
import * as E from "../observe/events";

/** The numbers `GET /admin/metrics` renders for one key (no history, no samples: a scrape stays small). */
/** A window's limit as told and what the limiter predicts is left. */
export type WindowLevel = { limit: number | null; remaining: number };

export interface KeyMetrics {
  limit: number;
  inFlight: number;
  queued: number;
  /** `output`: generated tokens alone, only on a key whose provider tells that window apart. */
  quotas: Record<"requests" | "tokens", WindowLevel | null> & { output?: WindowLevel | null };
  /** Seconds until the send gate opens (0: open). */
  gateSeconds: number;
  counters: Counters;
  logLinesDropped: number;
}

/** One key's numbers for `GET /admin/metrics`: who it is for, when it was last asked, and its KeyMetrics. */
export interface KeyMetricsReport extends KeyMetrics {
  meta: KeyMeta | null;
  lastSeen: number | null;
}

/** Lease ids already counted: the core ignores a repeated settle, and so must the counters. */
const SEEN_MAX = 2_048;

/**
 * What the operator sees of one limiter: counters, the sample ring and the event log. The object
 * calls it around each core call; this is the one place that reads the core's fields for them.
 */
export class Telemetry {
  counters: Counters;
  ring: Ring;
  #core: LimiterCore;
  #log: EventLog;
  #key: () => string;
  #seen = new Set<string>();

  constructor(core: LimiterCore, log: EventLog, key: () => string, saved: { counters?: unknown; samples?: unknown }, now: number) {
    this.#core = core;
    this.#log = log;
    this.#key = key;
    this.counters = saved.counters === undefined ? emptyCounters() : restoreCounters(saved.counters);
    this.ring = saved.samples === undefined ? emptyRing() : restoreRing(saved.samples, now);
  }

  levels(): Levels {
    const w = this.#core.quota.requests;
    return {
      inFlight: this.#core.inFlight,
      queued: this.#core.queue.size,
      limit: this.#core.aimd.limit,
      rate: w && w.refillPerMs > 0 ? Math.round(w.refillPerMs * 1_000 * 1_000) / 1_000 : null,
    };
  }

  #windows(): E.Windows {
    return { requests: this.#core.quota.requests?.limit ?? null, tokens: this.#core.quota.tokens?.limit ?? null };
  }

  #emit(events: E.LimiterEvent[], now: number): void {
    if (events.length > 0) this.#log.emit(this.#key(), events, now);
  }

  /** Runs `apply` (a core call) and reports the limit changes it made, whatever path made them. */
  #changes(apply: () => void): HistoryEntry[] {
    const history = this.#core.aimd.history;
    const last = history.at(-1);
    const lastTo = last?.to;
    apply();
    const now = this.#core.aimd.history;
    const from = last === undefined ? 0 : now.indexOf(last) + 1;
    // A growth step close behind one of the same reason extends that entry instead of adding one.
    const merged = last !== undefined && from === now.length && last.to !== lastTo;
    const added = merged ? [{ ...last, from: lastTo as number }] : now.slice(from);
    for (const h of added) countLimitChange(this.counters, h.reason as ChangeReason);
    return added;
  }

  /** Wraps core.settle: counts the attempt once, records it in the ring, and logs what it decided. */
  settle<T>(id: string, o: Outcome, now: number, apply: () => T): T {
    const before = { gate: this.#core.cooldownUntil, windows: this.#windows() };
    let result!: T;
    const added = this.#changes(() => (result = apply()));
    if (this.#seen.has(id)) return result;
    this.#seen.add(id);
    if (this.#seen.size > SEEN_MAX) this.#seen.delete(this.#seen.values().next().value as string);
    countAttempt(this.counters, o);
    const ended = (o as SettleRequest).ended;
    if (ended) countOperation(this.counters, ended, null);
    const lv = this.levels();
    noteAttempt(this.ring, now, lv, o);
    const view = { ...o, gateBefore: before.gate, gateAfter: this.#core.cooldownUntil, windowsBefore: before.windows, windowsAfter: this.#windows(), ...lv };
    this.#emit([...E.settleEvents(view, now), ...added.map((h) => E.limitChanged(h, lv.inFlight))], now);
    return result;
  }

  /** Wraps core.configure (or anything else that may move the limit: the reasons say which). */
  configure<T>(now: number, apply: () => T): T {
    let result!: T;
    const added = this.#changes(() => (result = apply()));
    noteLevels(this.ring, now, this.levels());
    this.#emit(added.map((h) => E.limitChanged(h, this.#core.inFlight)), now);
    return result;
  }

  granted(waitedMs: number, now: number): void {
    countGrant(this.counters, waitedMs);
    const lv = this.levels();
    noteLevels(this.ring, now, lv);
    if (this.#log.wants("debug")) this.#emit([E.slotGranted({ waitedMs, ...lv })], now);
  }

  timedOut(how: "expired" | "refused", waitedMs: number, retryAfterMs: number, now: number): void {
    countQueueTimeout(this.counters);
    const lv = this.levels();
    noteLevels(this.ring, now, lv);
    this.#emit([E.queueTimeout({ how, waitedMs, retryAfterMs, ...lv })], now);
  }

  expired(leases: readonly Lease[], now: number): void {
    if (leases.length === 0) return;
    countLeasesExpired(this.counters, leases.length);
    noteLevels(this.ring, now, this.levels());
    this.#emit(leases.map((l) => E.leaseExpired(l, this.#core.inFlight, now)), now);
  }

  /** Calls into the object on the hot path, and the operations they carried (more ops than calls is what batching saved). */
  called(calls: number, ops: number): void {
    this.counters.calls += calls;
    this.counters.ops += ops;
  }

  /** In-flight or queue changed without a decision (a release, a cancel, a new waiter). */
  moved(now: number): void {
    noteLevels(this.ring, now, this.levels());
  }

  restored(leases: number, now: number): void {
    const a = this.#core.aimd;
    this.#emit([E.restored({ limit: a.limit, phase: a.phase, leases, windows: this.#windows(), gateUntil: this.#core.cooldownUntil, history: a.history.length, samples: this.ring.buckets.length }, now)], now);
  }

  /** `POST .../reset` clears the metrics: counters and samples too (Prometheus reads it as a counter reset). */
  reset(now: number): void {
    this.counters = emptyCounters();
    this.ring = emptyRing();
    this.#seen.clear();
    noteLevels(this.ring, now, this.levels());
    this.#emit([E.resetDone(this.#core.aimd.limit)], now);
  }

  series(now: number): Point[] {
    return series(this.ring, now);
  }

  metrics(now: number): KeyMetrics {
    const q = (w: QuotaWindow | null, at: number) => (w ? { limit: w.limit, remaining: Math.max(0, Math.floor(available(w, at))) } : null);
    const lv = this.levels();
    return {
      limit: lv.limit,
      inFlight: lv.inFlight,
      queued: lv.queued,
      quotas: {
        requests: q(this.#core.quota.requests, now), tokens: q(this.#core.quota.tokens, now),
        ...(this.#core.quota.output && { output: q(this.#core.quota.output, now) }),
      },
      gateSeconds: Math.max(0, this.#core.cooldownUntil - now) / 1_000,
      counters: this.counters,
      logLinesDropped: this.#log.budget.droppedTotal,
    };
  }
}
