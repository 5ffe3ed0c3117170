/**
 * @module The Limiter Durable Object, one per rate-limit key: it decides who may go and when, and
 * bytes never pass through it. The class wires named parts to RPC and the alarm: the decisions are
 * LimiterCore's (core.ts), reached through LimiterDriver (driver.ts); a Worker's calls are Calls'
 * (calls.ts), a request's session stream is session-stream.ts; storage, the lease journal and the
 * sweep are LimiterStore's (store.ts); what a restart reads back is restart.ts; the Directory's
 * entry is Listing (listing.ts); usage into the ledger and the counters is KeyUsage (usage.ts);
 * what the operator sees is Telemetry (telemetry.ts); what a restart holds back for tickets is
 * TicketMark (tickets/mark.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { limiterConfigFromEnv } from "../config/env";
import { checkBounds, type LimiterOverride } from "../config/limits";
import { directoryOf } from "../directory/object";
import type { Env } from "../env";
import { EventLog } from "../observe/emit";
import { consoleSink, parseLevel, type Sink } from "../observe/log";
import type { UsageRecord } from "../usage/types";
import { flushMs, LedgerWriter } from "../usage/writer";
import { Calls } from "./calls";
import { LimiterCore } from "./core";
import { LimiterDriver } from "./driver";
import { weightsOrDefault } from "./lanes";
import { Listing } from "./listing";
import { lastLife, restoreLeases, stateRows } from "./restart";
import { STEP_MS, type Point } from "./samples";
import { serveSession } from "./session-stream";
import { snapshot } from "./snapshot";
import { LimiterStore, proves } from "./store";
import { type KeyMetrics, Telemetry } from "./telemetry";
import { firstEpoch } from "./tickets/epoch";
import { TicketMark } from "./tickets/mark";
import type { Ask } from "./tickets/policy";
import type { AcquireRequest, AcquireResult, ExchangeReply, KeyMeta, LimiterSnapshot, Op, SessionReply, SettleAnswer, SettleRequest } from "./types";
import { KeyUsage } from "./usage";

/** One key's numbers for `GET /admin/metrics`. */
export interface KeyMetricsReport extends KeyMetrics {
  meta: KeyMeta | null;
  lastSeen: number | null;
}

export class Limiter extends DurableObject<Env> {
  /** Injected in tests: Durable Object alarms do not follow fake timers. */
  now: () => number = () => Date.now();
  /** Where event lines go; tests may replace it. */
  sink: Sink = consoleSink;
  /** Usage kept in the object's outbox as it comes, written to the ledger in batches at its alarm. */
  ledger: LedgerWriter;
  private core: LimiterCore;
  #store: LimiterStore;
  #driver: LimiterDriver;
  #calls: Calls;
  #telemetry: Telemetry;
  #listing: Listing;
  #mark = new TicketMark();
  /** This life's first ticket epoch (tickets/epoch.ts). */
  #epoch: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.ledger = new LedgerWriter(env.LEDGER, ctx.storage.sql, flushMs(env.USAGE_FLUSH_MS));
    this.#store = new LimiterStore(ctx.storage, () => this.#rows(), () => this.core.leases.takeUsed(), () => void this.alarm(), () => this.now());
    const { rows, leases } = this.#store.load();
    const last = lastLife(rows);
    // A restart changes the ticket ids, and starts the epoch above the last life's (tickets/epoch.ts),
    // written before any answer leaves: an isolate gives back what it held of the last life.
    const [random, prefix] = crypto.getRandomValues(new Uint32Array(2));
    this.#epoch = firstEpoch(last.epoch, random! / 2 ** 32);
    this.#store.saveRow("epoch", String(this.#epoch));
    const core = (this.core = new LimiterCore(limiterConfigFromEnv(env), last.core, weightsOrDefault(env.PRIORITY_WEIGHTS), { epoch: this.#epoch, prefix: prefix!.toString(36) }));
    const store = this.#store;
    const listing = (this.#listing = new Listing({
      meta: last.meta,
      lastSeen: last.lastSeen,
      send: (e) => directoryOf(env.DIRECTORY).report(e),
      waitUntil: (p) => ctx.waitUntil(p),
      kept: () => store.proven,
      levels: () => ({ limit: core.aimd.limit, inFlight: core.inFlight, queued: core.queue.size }),
    }));
    const log = new EventLog(parseLevel(env.LOG_LEVEL), (level, line) => this.sink(level, line), this.now());
    const telemetry = (this.#telemetry = new Telemetry(core, log, () => listing.meta?.key ?? "", last, this.now()));
    const usage = new KeyUsage({ ledger: this.ledger, counters: () => telemetry.counters, arm: (at) => store.arm(at) });
    usage.recount(last.counted);
    const driver = (this.#driver = new LimiterDriver(core, () => this.now(), {
      granted: (w, waitedMs) => {
        store.keep(core.lease(w.id)!);
        telemetry.granted(waitedMs, this.now());
      },
      timedOut: (how, waitedMs, retryAfterMs) => telemetry.timedOut(how, waitedMs, retryAfterMs, this.now()),
      settled: (id, o, now, apply) => telemetry.settle(id, o, now, apply),
      answered: (o, now) => {
        if (proves(o)) this.#prove(now);
      },
      // A lease taken back on renewal (see core.renew) is journalled and swept like a granted one.
      takenBack: (lease) => store.keep(lease),
      dropped: (id) => {
        store.journal(id, null);
        // An unproven key's sweep is a timer, which holds the object in memory: none while nothing is held.
        if (core.leases.size === 0) store.idle();
      },
      moved: (now) => telemetry.moved(now),
      issued: (ids) => this.#issued(ids),
    }));
    this.#calls = new Calls({ core, driver, store, listing, telemetry, usage, now: () => this.now(), prove: (now) => this.#prove(now) });
    const now = this.now();
    restoreLeases(core, leases, now);
    core.holdBack(now, this.#mark.restore(last.tickets, now));
    if (last.core) telemetry.restored(leases.length, now);
    // Usage a previous life left in the outbox is written at the alarm this sets, traffic or not.
    this.#ensureAlarm();
  }

  /**
   * A batch of ops in one call, applied in order with one pump at the end: what a request's session
   * does with each of its ops, for a caller that has several at once (tests, tools). Acquires
   * answered at once come back granted or refused; the rest `queued`, and wait with `acquire` on
   * the same id (it joins the same place).
   */
  async exchange(meta: KeyMeta, ops: Op[], ask?: Ask): Promise<ExchangeReply> {
    return this.#calls.apply(meta, ops, 1, ask).reply;
  }

  /** A request's session: one call, whatever the queue (session-stream.ts). */
  async session(meta: KeyMeta, first: Op, more: ReadableStream<Uint8Array>): Promise<SessionReply> {
    return serveSession((ops, calls) => this.#calls.apply(meta, ops, calls), first, more);
  }

  async acquire(req: AcquireRequest): Promise<AcquireResult> {
    return this.#calls.acquire(req);
  }

  async settle(leaseId: string, outcome: SettleRequest): Promise<SettleAnswer> {
    return this.#calls.settle(leaseId, outcome);
  }

  async release(leaseId: string, usage?: UsageRecord): Promise<boolean> {
    return this.#calls.release(leaseId, usage);
  }

  /** Renewals stay in memory: a restored lease is cut to one renewal interval anyway. */
  async renew(leaseId: string, cost?: number): Promise<boolean> {
    return this.#calls.renew(leaseId, cost);
  }

  /** The caller left while queued: it must not be granted a slot nobody will use. */
  async cancel(leaseId: string): Promise<boolean> {
    return this.#calls.cancel(leaseId);
  }

  async state(): Promise<LimiterSnapshot> {
    return snapshot(this.core, this.#listing.meta, this.#listing.lastSeen, this.now());
  }

  /** Counters and gauges for a scrape: no history, no samples, so 1,000 of these stay small. */
  async metrics(): Promise<KeyMetricsReport> {
    return { meta: this.#listing.meta, lastSeen: this.#listing.lastSeen, ...this.#telemetry.metrics(this.now()) };
  }

  /** The last 15 minutes in STEP_MS buckets, for the dashboard's time series. */
  async samples(): Promise<{ stepMs: number; now: number; points: Point[] }> {
    const now = this.now();
    return { stepMs: STEP_MS, now, points: this.#telemetry.series(now) };
  }

  async configure(override: LimiterOverride): Promise<{ ok: true; state: LimiterSnapshot } | { ok: false; error: string }> {
    const now = this.now();
    const error = this.#telemetry.configure(now, () => this.core.configure(override, now, checkBounds));
    if (error) return { ok: false, error };
    this.#prove(now);
    this.#store.save();
    this.#driver.pump();
    return { ok: true, state: await this.state() };
  }

  async reset(): Promise<LimiterSnapshot> {
    this.core.reset();
    this.#telemetry.reset(this.now());
    this.#prove(this.now());
    this.#store.save();
    this.#driver.pump();
    return this.state();
  }

  /**
   * Sweeps leases whose Worker never came back and lets the queue move; writes the pending usage
   * to the ledger if it is due. Either may have nothing to do: an alarm set for one runs both.
   */
  async alarm(): Promise<void> {
    this.#store.fired();
    const now = this.now();
    const gone = this.core.expireLeases(now);
    for (const l of gone) this.#store.journal(l.id, null);
    this.#telemetry.expired(gone, now);
    this.#driver.pump();
    const due = this.ledger.due();
    // A failed write is kept for the next alarm (LedgerWriter never throws here). The counters
    // are written first: the records the write takes out of the outbox are counted in them.
    if (due !== null && due <= now) {
      this.#store.save();
      await this.ledger.flush(now);
    }
    this.#ensureAlarm();
  }

  /**
   * Tickets issued: journalled as leases (most come back before a flush). That some may be out, and
   * how many at most, is written before the reply that carries them leaves (it waits for its
   * turn's writes): a restart before its time holds them back (tickets/mark.ts).
   */
  #issued(ids: string[]): void {
    for (const id of ids) this.#store.keep(this.core.lease(id)!);
    const now = this.now();
    const mark = this.#mark.issued(now, this.core.limitAt(now));
    if (mark) this.#store.saveRow("tickets", JSON.stringify(mark));
  }

  /**
   * From its first 2xx (or an operator's config) on, the key is kept: written, listed, alarmed.
   * Only that first proof is written at once: a later 2xx's quotas and counters go with the next
   * flush, since a reply waits for its turn's writes to commit and the next request's acquire
   * (which carries this settle) would wait for them (1 to 2.5 ms a request inside workerd).
   */
  #prove(now: number): void {
    if (!this.#store.prove()) return;
    this.#listing.report(now);
    this.#store.saveRow("epoch", String(this.#epoch));
    this.#store.save();
  }

  /**
   * After a sweep, a write or a restart: the alarm goes to the earliest lease expiry (a scan, off
   * the hot path) or the next write of the usage, whichever comes first; none when neither waits.
   */
  #ensureAlarm(): void {
    const next = [this.core.nextLeaseExpiry(), this.ledger.due()].filter((t) => t !== null);
    if (next.length > 0) this.#store.arm(Math.min(...next));
  }

  /** The state rows a save writes (restart.ts). */
  #rows(): [string, string][] {
    const t = this.#telemetry;
    return stateRows({ core: this.core.persisted(), counters: t.counters, samples: t.ring, counted: this.ledger.seq, meta: this.#listing.meta, lastSeen: this.#listing.lastSeen });
  }
}
