/**
 * @module The Limiter Durable Object, one per rate-limit key: it decides who may go and when, and
 * bytes never pass through it. The class wires named parts to RPC and the alarm: the decisions are
 * LimiterCore's (core.ts), reached through LimiterDriver (driver.ts) and kept by object-hooks.ts; a
 * Worker's calls are Calls' (calls.ts), a request's session stream is session-stream.ts; storage and
 * the lease journal are LimiterStore's (store.ts), proof, the alarm and what a save writes Upkeep's
 * (upkeep.ts), what a restart reads back restart.ts; the Directory's entry is Listing's (listing.ts);
 * usage into the ledger and the counters KeyUsage's (usage.ts); what the operator sees Telemetry's
 * (telemetry.ts); what a restart holds back for tickets TicketMark's (tickets/mark.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { limiterConfigFromEnv } from "../config/env";
import { checkBounds, type LimiterOverride } from "../config/limits";
import { type DirectoryEntry, directoryOf } from "../directory/object";
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
import { objectHooks } from "./object-hooks";
import { lastLife, restoreLeases } from "./restart";
import { rowFacts } from "./row-facts";
import { STEP_MS, type Point } from "./samples";
import { serveSession } from "./session-stream";
import { snapshot } from "./snapshot";
import { LimiterStore } from "./store";
import { type KeyMetricsReport, Telemetry } from "./telemetry";
import { firstEpoch } from "./tickets/epoch";
import { TicketMark } from "./tickets/mark";
import type { Ask } from "./tickets/policy";
import type { AcquireRequest, AcquireResult, ExchangeReply, KeyMeta, LimiterSnapshot, Op, SessionReply, SettleAnswer, SettleRequest } from "./types";
import { Upkeep } from "./upkeep";
import { KeyUsage } from "./usage";

export class Limiter extends DurableObject<Env> {
  /** Injected in tests: Durable Object alarms do not follow fake timers. */
  now: () => number = () => Date.now();
  /** Where event lines go; tests may replace it. */
  sink: Sink = consoleSink;
  /** Usage kept in the object's outbox as it comes, written to the ledger in batches at its alarm. */
  ledger: LedgerWriter;
  private core: LimiterCore;
  #calls: Calls;
  #telemetry: Telemetry;
  #listing: Listing;
  #upkeep: Upkeep;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The parts reach each other through closures: `upkeep` and `core` are made below, before any runs.
    const now = () => this.now();
    const prove = (t: number) => upkeep.prove(t);
    const ledger = (this.ledger = new LedgerWriter(env.LEDGER, ctx.storage.sql, flushMs(env.USAGE_FLUSH_MS)));
    const store = new LimiterStore(ctx.storage, () => upkeep.rows(), () => core.leases.takeUsed(), () => void this.alarm(), now);
    const { rows, leases } = store.load();
    const last = lastLife(rows);
    // A restart changes the ticket ids, and starts the epoch above the last life's (tickets/epoch.ts),
    // written before any answer leaves: an isolate gives back what it held of the last life.
    const [random, prefix] = crypto.getRandomValues(new Uint32Array(2));
    const epoch = firstEpoch(last.epoch, random! / 2 ** 32);
    store.saveRow("epoch", String(epoch));
    const core = (this.core = new LimiterCore(limiterConfigFromEnv(env), last.core, weightsOrDefault(env.PRIORITY_WEIGHTS), { epoch, prefix: prefix!.toString(36) }));
    const levels = () => ({ limit: core.aimd.limit, inFlight: core.inFlight, queued: core.queue.size });
    const send = (e: DirectoryEntry) => directoryOf(env.DIRECTORY).report(e);
    const listing = (this.#listing = new Listing({ meta: last.meta, lastSeen: last.lastSeen, send, waitUntil: (p) => ctx.waitUntil(p), kept: () => store.proven, levels }));
    const log = new EventLog(parseLevel(env.LOG_LEVEL), (level, line) => this.sink(level, line), this.now());
    const telemetry = (this.#telemetry = new Telemetry(core, log, () => listing.meta?.key ?? "", last, this.now()));
    const usage = new KeyUsage({ ledger, counters: () => telemetry.counters, arm: (at) => store.arm(at) });
    usage.recount(last.counted);
    const mark = new TicketMark();
    const driver = new LimiterDriver(core, now, objectHooks({ core, store, telemetry, mark, now, prove }));
    const upkeep = (this.#upkeep = new Upkeep({ core, store, driver, telemetry, listing, ledger, epoch, now }));
    const row = rowFacts(env.PROVIDERS);
    this.#calls = new Calls({ core, driver, store, listing, telemetry, usage, now, prove, stated: (m) => row(m).stated, cacheReadsFree: (m) => row(m).cacheReadsFree, drawn: (m) => row(m).drawn });
    const t = this.now();
    restoreLeases(core, leases, t);
    core.holdBack(t, mark.restore(last.tickets, t));
    if (last.core) telemetry.restored(leases.length, t);
    // Usage a previous life left in the outbox is written at the alarm this sets, traffic or not.
    upkeep.ensureAlarm();
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
    const now = this.now();
    return snapshot(this.core, this.#listing.meta, this.#listing.lastSeen, now, this.#calls.cacheReadShare(now));
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
    this.#upkeep.operated(now);
    return { ok: true, state: await this.state() };
  }

  async reset(): Promise<LimiterSnapshot> {
    this.core.reset();
    this.#telemetry.reset(this.now());
    this.#upkeep.operated(this.now());
    return this.state();
  }

  /** Sweeps leases whose Worker never came back, writes the usage when due (upkeep.ts). */
  async alarm(): Promise<void> {
    await this.#upkeep.alarm();
  }
}
