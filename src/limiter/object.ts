import { DurableObject } from "cloudflare:workers";
import { limiterConfigFromEnv } from "../config/env";
import { checkBounds, type LimiterOverride } from "../config/limits";
import { directoryOf } from "../directory/object";
import type { Env } from "../env";
import { EventLog } from "../observe/emit";
import { consoleSink, parseLevel, type Sink } from "../observe/log";
import { type Lease, LimiterCore, type Persisted, renewEvery } from "./core";
import { weightsOrDefault } from "./lanes";
import { STEP_MS, type Point } from "./samples";
import { snapshot } from "./snapshot";
import { type KeyMetrics, Telemetry } from "./telemetry";
import { LimiterStore } from "./store";
import { LimiterDriver } from "./driver";
import { line, lines } from "./lines";
import type { AcquireRequest, AcquireResult, ExchangeReply, KeyMeta, LimiterSnapshot, Op, OpResult, SessionAnswer, SessionOp, SessionReply, SettleAnswer, SettleRequest } from "./types";
import { type Ask, TICKET_LAPSE_MS, ticketsAtMost } from "./tickets/policy";
import { firstEpoch } from "./tickets/epoch";
import type { UsageRecord } from "../usage/types";
import { DEFAULT_CALLER } from "./callers";
import { flushMs, LedgerWriter } from "../usage/writer";
import { countOperation, countUsage } from "./counters";

/** One key's numbers for `GET /admin/metrics`. */
export interface KeyMetricsReport extends KeyMetrics {
  meta: KeyMeta | null;
  lastSeen: number | null;
}

/** How often a busy key refreshes its Directory entry; the admin list reads live numbers anyway. */
const REPORT_MS = 15_000;
const REPORT_RETRY_MS = 1_000;
/** How far ahead a write says tickets may be out: one write this often while a key hands them out. */
const TICKETS_MARK_MS = 60_000;
/** A restored lease lives one renewal interval plus this, unless its Worker renews it. */
const RESTORE_MARGIN_MS = 5_000;

/**
 * One per rate-limit key. Decides who may go and when; bytes never pass through it. The
 * decisions are LimiterCore's; this class wires them to RPC, SQLite storage, timers and the alarm.
 */
export class Limiter extends DurableObject<Env> {
  /** Injected in tests: Durable Object alarms do not follow fake timers. */
  now: () => number = () => Date.now();
  /** Where event lines go; tests may replace it. */
  sink: Sink = consoleSink;
  private core: LimiterCore;
  #telemetry: Telemetry;
  #meta: KeyMeta | null = null;
  #lastSeen: number | null = null;
  #driver: LimiterDriver;
  /** Until when tickets may be out, and how many at most, as last written (a restart before then holds back that many). */
  #ticketsMark: [number, number] = [0, 0];
  /** This life's first ticket epoch (epoch.ts). */
  #epoch: number;
  /** When the Directory was last told about this key (in this instance's life). */
  #reportedAt = -Infinity;
  /**
   * Its storage. Until the key is proven (a 2xx, or an operator's config) nothing is written, the
   * Directory is not told and leases are swept by a timer, not a stored alarm: a stranger's
   * random keys cost no storage and are forgotten when their objects are evicted.
   */
  #store: LimiterStore;
  /** Usage kept in the object's outbox as it comes, written to the ledger in batches at its alarm. */
  ledger: LedgerWriter;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.ledger = new LedgerWriter(env.LEDGER, ctx.storage.sql, flushMs(env.USAGE_FLUSH_MS));
    this.#store = new LimiterStore(ctx.storage, () => this.#rows(), () => this.core.leases.takeUsed(), () => void this.alarm(), () => this.now());
    const { rows, leases } = this.#store.load();
    const saved = rows.get("core");
    this.#meta = rows.has("meta") ? (JSON.parse(rows.get("meta")!) as KeyMeta) : null;
    this.#lastSeen = rows.has("lastSeen") ? Number(rows.get("lastSeen")) : null;
    // A restart changes the ticket ids, and starts the epoch above the last life's (epoch.ts), written
    // before any answer leaves: an isolate gives back what it held of the last life.
    const [random, prefix] = crypto.getRandomValues(new Uint32Array(2));
    this.#epoch = firstEpoch(rows.has("epoch") ? Number(rows.get("epoch")) : null, random! / 2 ** 32);
    this.#store.saveRow("epoch", String(this.#epoch));
    this.core = new LimiterCore(limiterConfigFromEnv(env), saved ? (JSON.parse(saved) as Persisted) : undefined, weightsOrDefault(env.PRIORITY_WEIGHTS), { epoch: this.#epoch, prefix: prefix!.toString(36) });
    const log = new EventLog(parseLevel(env.LOG_LEVEL), (level, line) => this.sink(level, line), this.now());
    const row = (k: string) => (rows.has(k) ? (JSON.parse(rows.get(k)!) as unknown) : undefined);
    this.#telemetry = new Telemetry(this.core, log, () => this.#meta?.key ?? "", { counters: row("counters"), samples: row("samples") }, this.now());
    // Records kept after the counters were last written (a restart within a flush) are counted
    // again: the outbox refuses them if they are sent once more, so nothing else would count them.
    const counted = rows.get("counted");
    if (counted !== undefined) for (const usage of this.ledger.since(Number(counted))) this.#countIn(usage);
    this.#driver = new LimiterDriver(this.core, () => this.now(), {
      granted: (w, waitedMs) => {
        const lease = this.core.lease(w.id)!;
        this.#journal(w.id, lease);
        this.#store.arm(lease.expiresAt);
        this.#telemetry.granted(waitedMs, this.now());
      },
      timedOut: (how, waitedMs, retryAfterMs) => this.#telemetry.timedOut(how, waitedMs, retryAfterMs, this.now()),
      settled: (id, o, now, apply) => this.#telemetry.settle(id, o, now, apply),
      answered: (o, now) => {
        // A pool member that goes out is listed (GET /admin/pools) even if it never answered 2xx;
        // any other answer (a holder's 404 for a made-up model) keeps nothing.
        if ((o.status >= 200 && o.status < 300) || (o.pooled && o.out !== undefined)) this.#prove(now);
      },
      // A lease taken back on renewal (see core.renew) is journalled and swept like a granted one.
      takenBack: (lease) => {
        this.#journal(lease.id, lease);
        this.#store.arm(lease.expiresAt);
      },
      dropped: (id) => {
        this.#journal(id, null);
        // An unproven key's sweep is a timer, which holds the object in memory: none while nothing is held.
        if (this.core.leases.size === 0) this.#store.idle();
      },
      moved: (now) => this.#telemetry.moved(now),
      // Tickets are journalled as leases (most come back before a flush). That some may be out,
      // and how many at most, is written before the reply that carries them leaves (it waits for
      // its turn's writes), once a TICKETS_MARK_MS or when the most grows: a restart within it
      // holds back what they could hold (ticketing.ts, holdBack).
      issued: (ids) => {
        for (const id of ids) this.#journal(id, this.core.lease(id)!);
        this.#store.arm(this.core.lease(ids[0]!)!.expiresAt);
        const now = this.now();
        const most = ticketsAtMost(this.core.limitAt(now));
        const [until, slots] = this.#ticketsMark;
        if (until >= now + TICKET_LAPSE_MS && slots >= most) return;
        this.#ticketsMark = [now + TICKETS_MARK_MS, Math.max(most, until > now ? slots : 0)];
        this.#store.saveRow("tickets", JSON.stringify(this.#ticketsMark));
      },
    });
    // Leases outlive the object: their Workers may still be streaming and will renew and release
    // them. But the restart may have taken those Workers too (a deploy), so a restored lease only
    // lives until its holder's next renewal would have come, not a whole TTL.
    const now = this.now();
    const grace = renewEvery(this.core.config.leaseTtlMs) + RESTORE_MARGIN_MS;
    for (const l of leases) this.core.restoreLease(l.id, l.cost, Math.min(l.expires, now + grace), now, l.unused !== false);
    if (rows.has("tickets")) this.#ticketsMark = JSON.parse(rows.get("tickets")!) as [number, number];
    if (now < this.#ticketsMark[0]) this.core.holdBack(now, this.#ticketsMark[1]);
    if (saved) this.#telemetry.restored(leases.length, now);
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
    return this.#apply(meta, ops, 1, ask).reply;
  }

  /**
   * A request's session: its first op (an acquire) answered as in an exchange, and every later op
   * of the same request (its settles and release, renewals, a retry's acquire) read from `more`
   * as the Worker writes them, in order. So a request is one call, whatever the queue: a queued
   * acquire's grant and the answers to the ops the Worker waits for (numbered) come down
   * `answers`, and a release rides the stream instead of a call of its own.
   */
  async session(meta: KeyMeta, first: Op, more: ReadableStream<Uint8Array>): Promise<SessionReply> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const out = writable.getWriter();
    const sent: Promise<unknown>[] = [];
    const answer = (n: number, r: OpResult | Promise<AcquireResult>) =>
      sent.push(Promise.resolve(r).then((v) => out.write(line({ n, r: v } satisfies SessionAnswer))).catch(() => {}));
    const { reply, waiting } = this.#apply(meta, [first], 1);
    const queued = waiting.get(0);
    if (queued) answer(0, queued);
    void this.#follow(meta, more, answer).finally(async () => {
      await Promise.all(sent);
      await out.close().catch(() => {});
    });
    return { ...reply, answers: readable };
  }

  /** The rest of a session: each op applied as it comes. A stream that breaks is a Worker gone: its leases expire. */
  async #follow(meta: KeyMeta, more: ReadableStream<Uint8Array>, answer: (n: number, r: OpResult | Promise<AcquireResult>) => void): Promise<void> {
    try {
      for await (const op of lines<SessionOp>(more)) {
        const { reply, waiting } = this.#apply(meta, [op], 0);
        if (op.n !== undefined) answer(op.n, waiting.get(0) ?? reply.results[0]!);
      }
    } catch {
      // Nothing to answer: the request that wrote it has gone.
    }
  }

  /**
   * Applies a batch of ops (one pump at the end); `calls`: how many calls brought them (a
   * session's later ops come on its stream, not in calls).
   */
  #apply(meta: KeyMeta, ops: Op[], calls: number, ask?: Ask): { reply: ExchangeReply; waiting: Map<number, Promise<AcquireResult>> } {
    const now = this.#counted(ops.length, calls);
    // Only a request counts as the key being seen: a batch of releases is the end of old ones.
    this.#touch(meta, now, ops.some((op) => op.t === "acquire"));
    // An answer's usage rides the op that ends it: counted once per lease, dated when it was made.
    for (const op of ops) {
      const usage = op.t === "release" ? op.usage : op.t === "settle" ? op.outcome.usage : undefined;
      if (usage && (op.t === "release" || op.t === "settle")) this.#count(op.id, usage, now - (op.ageMs ?? 0));
    }
    const before = this.core.cooldownUntil;
    const { results, changed, waiting } = this.#driver.exchange(ops);
    // Tickets only for a kept key: a restart must find them in its storage.
    const ids = ask && this.#store.proven ? this.#driver.issue(ask) : [];
    this.#persist(changed || this.core.cooldownUntil > before);
    const tickets = ids.length > 0 ? { tickets: { ids, cost: ask!.cost, leaseTtlMs: this.core.config.leaseTtlMs, ...this.core.pacing() } } : {};
    return { reply: { results, queued: this.core.queue.size, room: Math.max(0, this.core.limitAt(now) - this.core.busy), epoch: this.core.epoch, ...tickets }, waiting };
  }

  async acquire(req: AcquireRequest): Promise<AcquireResult> {
    const now = this.#counted(1);
    this.#touch(req, now, true);
    const answer = this.#driver.acquire({ id: req.leaseId, cost: req.cost, retry: req.retry, deadline: now + Math.max(0, req.waitMs), caller: req.caller, lane: req.priority, pooled: req.pooled, tier: req.tier });
    this.#telemetry.moved(now);
    return answer;
  }

  async settle(leaseId: string, outcome: SettleRequest): Promise<SettleAnswer> {
    const now = this.#counted(1);
    if (outcome.usage) this.#count(leaseId, outcome.usage, now);
    const gate = this.core.cooldownUntil;
    const { changed, answer } = this.#driver.settle(leaseId, outcome);
    this.#persist(changed || this.core.cooldownUntil > gate);
    return answer;
  }

  async release(leaseId: string, usage?: UsageRecord): Promise<boolean> {
    const now = this.#counted(1);
    if (usage) this.#count(leaseId, usage, now);
    return this.#driver.release(leaseId);
  }

  /** Renewals stay in memory: a restored lease is cut to one renewal interval anyway. */
  async renew(leaseId: string, cost?: number): Promise<boolean> {
    this.#counted(1);
    return this.#driver.renew(leaseId, cost);
  }

  /** The caller left while queued: it must not be granted a slot nobody will use. */
  async cancel(leaseId: string): Promise<boolean> {
    this.#counted(1);
    return this.#driver.cancel(leaseId);
  }

  async state(): Promise<LimiterSnapshot> {
    return snapshot(this.core, this.#meta, this.#lastSeen, this.now());
  }

  /** Counters and gauges for a scrape: no history, no samples, so 1,000 of these stay small. */
  async metrics(): Promise<KeyMetricsReport> {
    return { meta: this.#meta, lastSeen: this.#lastSeen, ...this.#telemetry.metrics(this.now()) };
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
    this.#pump();
    return { ok: true, state: await this.state() };
  }

  async reset(): Promise<LimiterSnapshot> {
    this.core.reset();
    this.#telemetry.reset(this.now());
    this.#prove(this.now());
    this.#store.save();
    this.#pump();
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
    for (const l of gone) this.#journal(l.id, null);
    this.#telemetry.expired(gone, now);
    this.#pump();
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
   * Notes who this limiter is for, and tells the Directory: at once on its first request (after a
   * restart too), then at most every REPORT_MS. Fire-and-forget from inside the object, so no
   * caller ever waits on the Directory; a failed report is tried again after REPORT_RETRY_MS.
   */
  #touch(meta: KeyMeta, now: number, asked: boolean): void {
    this.#meta ??= { key: meta.key, provider: meta.provider, model: meta.model };
    if (asked) this.#lastSeen = now;
    this.#report(now);
  }

  #report(now: number): void {
    if (!this.#store.proven || !this.#meta || now - this.#reportedAt < REPORT_MS) return;
    this.#reportedAt = now;
    const entry = { ...this.#meta, limit: this.core.aimd.limit, inFlight: this.core.inFlight, queued: this.core.queue.size, lastSeen: now };
    // Async so that even a missing binding only fails the report, never the caller's acquire.
    const report = (async () => directoryOf(this.env.DIRECTORY).report(entry))();
    this.ctx.waitUntil(
      report.catch(() => {
        this.#reportedAt = now - REPORT_MS + REPORT_RETRY_MS;
      }),
    );
  }

  /**
   * One answer's usage: into the outbox and the key's counters, once per lease. A record only
   * comes with a 2xx answer, which proves the key: it is proven first, so its row is written. Its
   * caller is the one its lease was filed under (callers.ts: past MAX_CALLERS, the overflow one),
   * so a flood of caller names makes no more ledger rows than callers a key may have.
   */
  #count(leaseId: string, usage: UsageRecord, at: number): void {
    if (!this.#store.proven) this.#prove(this.now());
    const filed = this.core.lease(leaseId)?.caller;
    // Kept whole (its `ended` too): a restart counts the records after the last write again from here.
    const record = filed !== undefined && filed !== DEFAULT_CALLER ? { ...usage, caller: filed } : usage;
    if (!this.ledger.add(leaseId, this.#meta?.key ?? "", record, at)) return;
    this.#countIn(usage);
    const due = this.ledger.due();
    if (due !== null) this.#store.arm(due);
  }

  #countIn(usage: UsageRecord): void {
    countUsage(this.#telemetry.counters, usage.tokens, usage.costUsd);
    if (usage.ended) countOperation(this.#telemetry.counters, usage.ended, usage.tokens);
  }

  /** Counts hot-path calls and the operations they carry; returns the time now. */
  #counted(ops: number, calls = 1): number {
    this.#telemetry.counters.calls += calls;
    this.#telemetry.counters.ops += ops;
    return this.now();
  }

  /** A new limit or a later gate is written at once; quotas and counters go with the next flush. */
  #persist(urgent: boolean): void {
    if (urgent) this.#store.save();
    else this.#store.scheduleFlush();
  }

  #journal(id: string, lease: Lease | null): void {
    this.#store.journal(id, lease);
  }

  /**
   * From its first 2xx (or an operator's config) on, the key is kept: written, listed, alarmed.
   * Only that first proof is written at once: a later 2xx's quotas and counters go with the next
   * flush, since a reply waits for its turn's writes to commit and the next request's acquire
   * (which carries this settle) would wait for them (1 to 2.5 ms a request inside workerd).
   */
  #prove(now: number): void {
    if (!this.#store.prove()) return;
    this.#report(now);
    this.#store.saveRow("epoch", String(this.#epoch));
    this.#store.save();
  }

  #pump(): void {
    this.#driver.pump();
  }

  /**
   * After a sweep, a write or a restart: the alarm goes to the earliest lease expiry (a scan, off
   * the hot path) or the next write of the usage, whichever comes first; none when neither waits.
   */
  #ensureAlarm(): void {
    const next = [this.core.nextLeaseExpiry(), this.ledger.due()].filter((t) => t !== null);
    if (next.length > 0) this.#store.arm(Math.min(...next));
  }

  /** The state rows a save writes: everything learned, the counters and samples, and who the key is. */
  #rows(): [string, string][] {
    const rows: [string, string][] = [
      ["core", JSON.stringify(this.core.persisted())],
      // Counters and the sample ring have rows of their own: the core's row stays the lead's format.
      ["counters", JSON.stringify(this.#telemetry.counters)],
      ["samples", JSON.stringify(this.#telemetry.ring)],
      // The counters above include every usage record kept up to here (see the constructor).
      ["counted", String(this.ledger.seq)],
    ];
    if (this.#meta) rows.push(["meta", JSON.stringify(this.#meta)]);
    if (this.#lastSeen !== null) rows.push(["lastSeen", String(this.#lastSeen)]);
    return rows;
  }
}

