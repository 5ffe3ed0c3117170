import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RUNS, TIMEOUT } from "./runs";
import { checkBounds, type LimiterConfig } from "../../src/config/limits";
import { LEARN_MS, LEARN_STEP_MS, LimiterCore, type Outcome, SEND_JITTER_MS } from "../../src/limiter/core";
import type { Lane } from "../../src/limiter/lanes";
import { DEFAULT_CALLER, type Waiter } from "../../src/limiter/queue";
import { fitsAt, type QuotaState, type QuotaWindow } from "../../src/limiter/quota";
import type { OutcomeClass, QuotaReading, RateLimitInfo } from "../../src/policy/types";

const DAY = 86_400_000;

/*
 * The limiter core driven by random sequences of calls, checked against a model of every waiter.
 *
 * Queue order. The core keeps two FIFO lines: retries (in arrival order) ahead of fresh waiters (in
 * arrival order), and grants strictly from the head: a head that may not go (no free slot, gate
 * shut, quota short) blocks everyone behind it, however small. "Arrival" is the order of enqueue
 * calls. So the exact FIFO property is:
 *
 *   (F) At every grant, the waiter granted is the FIRST still-queued waiter in the order
 *       (retries by arrival, then fresh by arrival); "still queued" is after this pump's expiries and
 *       after the grants before it in the same pump.
 *
 * Consequences: among fresh waiters, grants happen in arrival order, and no fresh waiter is granted
 * while any retry waiter (even one that arrived later) or any earlier fresh waiter is still queued;
 * among retries, grants happen in arrival order; a retry is never granted after a fresh waiter that
 * arrived later (that fresh waiter could only go once no retry was queued). A waiter that left the
 * line (expired or cancelled) never blocks anyone. Rejected waiters never enter the line.
 *
 * Safety, checked at every call (the grant checks are made inside the grant, by watching the lease map):
 *   (S1) at the moment of a grant, in-flight leases after it <= the AIMD limit at that moment;
 *   (S2) no grant while now < cooldownUntil;
 *   (S3) no grant of a waiter whose cost does not fit the quota model at that moment (fitsAt <= now);
 *   (S4) every waiter is resolved exactly once: enqueue answers queued or rejected; a queued waiter
 *        leaves the line once, as granted, expired or cancelled, and is never lost (the core's queue
 *        is, in order, exactly the model's still-queued waiters after every call); cancel returns it
 *        only while queued; a lease id is granted at most once;
 *   (S5) an expired waiter had deadline <= now, or before the send gate opens (it could never go),
 *        and after a pump no queued waiter has deadline <= now;
 *   (S6) admission: enqueue rejects exactly when max(cooldownUntil, fitsAt(cost)) > deadline, and a
 *        rejection carries a finite retryAfterMs >= 1000;
 *   (S7) a pump stops only at a head that may not go: after it, the queue is empty, or in-flight >=
 *        limit, or now < cooldownUntil, or the head's cost does not fit the quota now (work-conserving);
 *   (S8) the lease map is exactly the model's held leases (granted, not released, not expired), an
 *        expired lease had expiresAt <= now, cooldownUntil never moves back, and the limit stays an
 *        integer within [min, max].
 *
 * With callers and lanes (x-slotgate-caller, x-slotgate-priority) the line is one per caller and
 * lane, and (F) holds within each: the waiter granted is the first still-queued waiter of its own
 * line, and the head the core stops at is the first of its own line. (S1-S8) hold unchanged. With
 * no caller and no lane, as in the first properties, there is one line and (F) is the old FIFO.
 *
 * Liveness (separate properties, since they fail today: see the pinned examples at the end):
 *   (L1) the alarm chain makes progress: whenever someone is queued, pumping at wakeAt(now), with no
 *        other call in between, grants or expires at least one waiter within 3 wake-ups (a correct
 *        wakeAt needs 1, or 2 when float rounding leaves a window a fraction of a unit short);
 *   (L2) an idle key recovers: once nobody waits, every lease is released, and the clock is past the gate and past
 *        the time every quota window needs, at the model's own refill rate, to refill completely from
 *        the lowest level it can hold ((2 x limit + largest cost granted) / refillPerMs; 1 for
 *        the requests window), a fresh waiter with a long deadline is admitted and granted at once.
 *        (Windows the model never refills, with no limit or no rate, are left out: that is by design.)
 */

// ---------------------------------------------------------------------------------------------
// Operations

type Reading = { limit: number | null; remaining: number | null; resetIn: number | null };
type Op =
  | { k: "enqueue"; retry: boolean; cost: number; deadlineIn: number; caller?: string; lane?: Lane }
  | { k: "release"; pick: number }
  | { k: "cancel"; pick: number }
  | { k: "settle"; pick: number; cls: OutcomeClass; attempt: number; retryAfterMs: number | null; requests: Reading | null; tokens: Reading | null }
  | { k: "tick"; dt: number; expireLeases: boolean }
  | { k: "limit"; at: number }
  | { k: "follow" };

const config: fc.Arbitrary<LimiterConfig> = fc
  .tuple(
    fc.integer({ min: 1, max: 3 }),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: 0, max: 6 }),
    fc.double({ min: 0.05, max: 0.95, noNaN: true }),
    fc.integer({ min: 1, max: 100 }),
    fc.constantFrom(0, 500, 1_000, 3_000),
    fc.integer({ min: 1_000, max: 30_000 }),
  )
  .map(([min, startUp, maxUp, decreaseFactor, scaleUpPercent, cooldownMs, leaseTtlMs]) => ({
    minConcurrency: min,
    startConcurrency: min + Math.min(startUp, maxUp),
    maxConcurrency: min + maxUp,
    decreaseFactor,
    scaleUpPercent,
    cooldownMs,
    leaseTtlMs,
  }));

const reading = (maxLimit: number): fc.Arbitrary<Reading> =>
  fc.record({
    limit: fc.option(fc.oneof({ arbitrary: fc.integer({ min: 1, max: maxLimit }), weight: 9 }, { arbitrary: fc.constant(0), weight: 1 }), { freq: 6 }),
    remaining: fc.option(fc.nat({ max: Math.ceil(maxLimit * 1.2) }), { freq: 6 }),
    resetIn: fc.option(
      fc.oneof({ arbitrary: fc.integer({ min: -5_000, max: 120_000 }), weight: 9 }, { arbitrary: fc.integer({ min: -DAY, max: DAY }), weight: 1 }),
      { freq: 3 },
    ),
  });

const cost = fc.oneof(fc.nat({ max: 50 }), fc.nat({ max: 2_500 }));
const enqueueOp = fc.record({
  k: fc.constant("enqueue" as const),
  retry: fc.boolean(),
  cost,
  deadlineIn: fc.oneof(fc.constant(0), fc.nat({ max: 30_000 }), fc.nat({ max: 300_000 })),
});
/** Enqueues from three callers and the default one, in any lane or none. */
const callerEnqueueOp = fc.record({
  k: fc.constant("enqueue" as const),
  retry: fc.boolean(),
  cost,
  deadlineIn: fc.oneof(fc.constant(0), fc.nat({ max: 30_000 }), fc.nat({ max: 300_000 })),
  caller: fc.constantFrom(undefined, "a", "b", "c"),
  lane: fc.constantFrom<Lane | undefined>(undefined, "high", "normal", "low"),
});
const opsFor = (liveness: boolean, callers = false): fc.Arbitrary<Op> =>
  fc.oneof(
    { arbitrary: callers ? callerEnqueueOp : enqueueOp, weight: 6 },
    { arbitrary: fc.record({ k: fc.constant("release" as const), pick: fc.nat() }), weight: 3 },
    { arbitrary: fc.record({ k: fc.constant("cancel" as const), pick: fc.nat() }), weight: 1 },
    {
      arbitrary: fc.record({
        k: fc.constant("settle" as const),
        pick: fc.nat(),
        cls: fc.constantFrom<OutcomeClass>("success", "success", "rate_limit", "hard_quota", "transient", "fatal"),
        attempt: fc.integer({ min: 1, max: 3 }),
        retryAfterMs: fc.option(fc.oneof({ arbitrary: fc.nat({ max: 5_000 }), weight: 19 }, { arbitrary: fc.nat({ max: DAY }), weight: 1 }), { freq: 2 }),
        requests: fc.option(reading(20), { freq: 2 }),
        tokens: fc.option(reading(3_000), { freq: 2 }),
      }),
      weight: 4,
    },
    { arbitrary: fc.record({ k: fc.constant("tick" as const), dt: fc.oneof(fc.constant(0), fc.nat({ max: 2_000 }), fc.nat({ max: 70_000 })), expireLeases: fc.boolean() }), weight: 6 },
    { arbitrary: fc.record({ k: fc.constant("limit" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }), weight: 1 },
    ...(liveness ? [{ arbitrary: fc.constant({ k: "follow" as const }), weight: 2 }] : []),
  );

// ---------------------------------------------------------------------------------------------
// The quota decision, written again from the rule (not quota.ts's code): a window pays for `need`
// units when what it holds now (its last level plus refill since, up to its size) covers them
// and SEND_JITTER_MS of refill more; a request larger than that goes when the window is full.

function windowPays(w: QuotaWindow | null, need: number, now: number): boolean {
  if (!w) return true;
  const size = w.capacity ?? w.limit;
  let level = w.remaining + w.refillPerMs * Math.max(0, now - w.observedAt);
  if (size !== null) level = Math.min(size, level);
  const padded = need + w.refillPerMs * SEND_JITTER_MS;
  return level >= (size !== null ? Math.min(padded, size) : padded);
}

function modelFits(q: QuotaState, cost: number, now: number): boolean {
  return windowPays(q.requests, 1, now) && windowPays(q.tokens, cost, now);
}

// ---------------------------------------------------------------------------------------------
// The harness: the core, and a model of every waiter it was ever given.

type State = "queued" | "rejected" | "granted" | "expired" | "cancelled";
interface Entry {
  w: Waiter;
  seq: number;
  state: State;
}

class Harness {
  readonly core: LimiterCore;
  now = 0;
  private seq = 0;
  private readonly entries: Entry[] = [];
  private readonly byId = new Map<string, Entry>();
  /** Lease ids granted and neither released nor expired, in grant order. */
  private held: string[] = [];
  private lastCooldown = 0;
  /** Held leases whose whole answer was settled (the provider is done with them): not busy. */
  private done = new Set<string>();
  /** Lease ids ever settled (the core ignores a repeat), and when the first grant (the probe) went. */
  private settledIds = new Set<string>();
  private probeAt: number | null = null;
  /** The opening after a new key's first answer (null: none, or a refusal ended it). */
  private opening: { at: number; from: number; limit: number; stepMs: number } | null = null;
  /** The largest cost granted so far: a grant larger than a whole window may overdraw it by that much. */
  private maxCost = 0;
  step = -1;

  constructor(cfg: LimiterConfig) {
    this.core = new LimiterCore(cfg);
    // Watch every grant from inside: LimiterCore.grant takes the lease before charging the quota.
    const leases = this.core.leases;
    const grant = leases.grant.bind(leases);
    leases.grant = (id: string, cost: number, now: number, ttlMs: number, caller?: string) => {
      this.atGrant(id, cost, now + ttlMs);
      return grant(id, cost, now, ttlMs, caller);
    };
  }

  ok(cond: boolean, what: string): asserts cond {
    if (cond) return;
    const c = this.core;
    throw new Error(
      `${what}\n  at step ${this.step}, now=${this.now}, inFlight=${c.inFlight}, limit=${c.aimd.limit}, cooldownUntil=${c.cooldownUntil}` +
        `\n  queue=${JSON.stringify([...c.queue].map((w) => [w.id, w.cost, w.deadline]))}\n  quota=${JSON.stringify(c.quota)}`,
    );
  }

  /**
   * The model's line: still-queued waiters, retries first, each group in arrival order; all of
   * them, or those of one caller and lane (the core files a waiter's resolved caller and lane on it).
   */
  line(of?: Waiter): Entry[] {
    const mine = (e: Entry) => !of || ((e.w.caller ?? DEFAULT_CALLER) === (of.caller ?? DEFAULT_CALLER) && (e.w.lane ?? "normal") === (of.lane ?? "normal"));
    return this.entries
      .filter((e) => e.state === "queued" && mine(e))
      .sort((a, b) => (a.w.retry === b.w.retry ? a.seq - b.seq : a.w.retry ? -1 : 1));
  }

  /** The model's count of leases the provider is busy with. */
  private busy(): number {
    return this.held.filter((h) => !this.done.has(h)).length;
  }

  /**
   * The model's limit now: while no answer has come, 1 until LEARN_MS after the probe, then one
   * more each LEARN_STEP_MS (up to the maximum); after it, the AIMD limit, which the opening holds
   * down to one more slot a step (plus the limit's growth since) until a refusal.
   */
  private limit(): number {
    if (this.settledIds.size > 0) {
      const l = this.core.aimd.limit;
      const o = this.opening;
      if (!o) return l;
      const steps = o.stepMs > 0 ? Math.floor((this.now - o.at) / o.stepMs + 1e-9) : Number.POSITIVE_INFINITY;
      return Math.min(l, o.from + 1 + steps + Math.max(0, l - o.limit));
    }
    if (this.probeAt === null || this.now - this.probeAt < LEARN_MS) return 1;
    return Math.min(this.core.config.maxConcurrency, 2 + Math.floor((this.now - this.probeAt - LEARN_MS) / LEARN_STEP_MS));
  }

  private atGrant(id: string, cost: number, expiresAt: number) {
    const c = this.core;
    this.ok(!c.leases.has(id), `(S4) lease ${id} granted twice`);
    // Checked against the harness's own model, not the core's busy/limitAt/fitsAt: the limit counts
    // what the provider is busy with (answers complete but unreleased are not), and a key never
    // answered sends its probe alone for LEARN_MS.
    const busy = this.busy();
    const limit = this.limit();
    this.ok(busy + 1 <= limit, `(S1) grant of ${id} makes ${busy + 1} busy over the limit ${limit}`);
    this.probeAt ??= this.now;
    this.ok(this.now >= c.cooldownUntil, `(S2) grant of ${id} while the gate is shut until ${c.cooldownUntil}`);
    this.ok(modelFits(c.quota, cost, this.now), `(S3) grant of ${id} (cost ${cost}) that the quota's windows cannot pay for`);
    this.ok(expiresAt === this.now + c.config.leaseTtlMs, `lease ${id} expires at now + leaseTtlMs`);
  }

  pump(): { granted: Waiter[]; expired: Waiter[] } {
    const c = this.core;
    const r = c.pump(this.now);
    for (const w of r.expired) {
      const e = this.byId.get(w.id);
      this.ok(e?.state === "queued", `(S4) ${w.id} expired while ${e?.state ?? "unknown"}`);
      this.ok(w.deadline <= Math.max(this.now, this.core.cooldownUntil - 1), `(S5) ${w.id} expired with deadline ${w.deadline} > now and the gate open by then`);
      e.state = "expired";
    }
    for (const w of r.granted) {
      const e = this.byId.get(w.id);
      this.ok(e?.state === "queued", `(S4) ${w.id} granted while ${e?.state ?? "unknown"}`);
      const first = this.line(w)[0];
      this.ok(first?.w.id === w.id, `(F) ${w.id} granted while ${first?.w.id} is ahead of it in its line`);
      e.state = "granted";
      this.maxCost = Math.max(this.maxCost, w.cost);
      this.held.push(w.id);
    }
    const line = this.line();
    for (const e of line) this.ok(e.w.deadline > this.now, `(S5) ${e.w.id} still queued at its deadline ${e.w.deadline}`);
    const peeked = c.queue.peek();
    const head = peeked && this.byId.get(peeked.id);
    if (head) this.ok(this.line(head.w)[0] === head, `(F) the queue's head ${head.w.id} is not the first of its own line`);
    if (head)
      this.ok(
        this.busy() >= this.limit() || this.now < c.cooldownUntil || !modelFits(c.quota, head.w.cost, this.now),
        `(S7) pump stopped at ${head.w.id}, which could have gone`,
      );
    return r;
  }

  enqueue(retry: boolean, cost: number, deadline: number, caller?: string, lane?: Lane): Entry {
    const c = this.core;
    const id = `w${this.seq}${retry ? "r" : ""}`;
    const w: Waiter = { id, cost, deadline, retry, enqueuedAt: this.now, caller, lane };
    const shutUntil = Math.max(c.cooldownUntil, fitsAt(c.quota, cost, this.now, 1, false, SEND_JITTER_MS));
    const a = c.enqueue(w, this.now);
    const e: Entry = { w, seq: this.seq++, state: a.kind === "queued" ? "queued" : "rejected" };
    this.entries.push(e);
    this.byId.set(id, e);
    if (a.kind === "rejected") {
      this.ok(shutUntil > deadline, `(S6) ${id} rejected though it may go at ${shutUntil} <= deadline ${deadline}`);
      this.ok(Number.isFinite(a.retryAfterMs) && a.retryAfterMs >= 1_000, `(S6) rejection of ${id} carries retryAfterMs ${a.retryAfterMs}`);
    } else this.ok(shutUntil <= deadline, `(S6) ${id} queued though nothing may go before ${shutUntil} > deadline ${deadline}`);
    return e;
  }

  apply(o: Op): void {
    const c = this.core;
    switch (o.k) {
      case "enqueue":
        this.enqueue(o.retry, o.cost, this.now + o.deadlineIn, o.caller, o.lane);
        break;
      case "release": {
        // A held lease, or (one pick in n+1) an id that is not held: released before, or never granted.
        const id = this.held[o.pick % (this.held.length + 1)] ?? this.entries[o.pick % Math.max(1, this.entries.length)]?.w.id ?? "nobody";
        const held = this.held.includes(id);
        this.ok(c.release(id, this.now) === held, `release(${id}) answers whether it was held (${held})`);
        this.held = this.held.filter((x) => x !== id);
        break;
      }
      case "cancel": {
        if (!this.entries.length) break;
        const e = this.entries[o.pick % this.entries.length] as Entry;
        const got = c.cancel(e.w.id);
        this.ok((got?.id ?? null) === (e.state === "queued" ? e.w.id : null), `(S4) cancel(${e.w.id}) while ${e.state} returned ${got?.id}`);
        if (e.state === "queued") e.state = "cancelled";
        break;
      }
      case "settle": {
        const id = this.held[o.pick % (this.held.length + 1)] ?? `other${o.pick % 4}`;
        const at = (r: Reading | null): QuotaReading | null =>
          r && { limit: r.limit, remaining: r.remaining, resetAt: r.resetIn === null ? null : this.now + r.resetIn };
        const info: RateLimitInfo = { retryAfterMs: o.retryAfterMs, requests: at(o.requests), tokens: at(o.tokens) };
        const outcome: Outcome = { cls: o.cls, status: 200, info, latencyMs: 100, attempt: o.attempt, final: true };
        if (!this.settledIds.has(id) && o.cls === "success" && this.held.includes(id)) this.done.add(id);
        const first = this.settledIds.size === 0;
        this.settledIds.add(id);
        c.settle(id, outcome, this.now);
        // A new key's first answer to a slot it granted opens half of START_CONCURRENCY, then one slot a step (its latency over START_CONCURRENCY).
        if (o.cls === "rate_limit") this.opening = null;
        else if (first)
          this.opening = !this.held.includes(id) ? null
            : {
              at: this.now, from: Math.max(this.busy(), Math.floor(c.config.startConcurrency / 2) - 1), limit: c.aimd.limit,
              stepMs: Math.min(LEARN_STEP_MS, Math.floor(outcome.latencyMs / c.config.startConcurrency)),
            };
        break;
      }
      case "tick":
        this.now += o.dt;
        if (o.expireLeases)
          for (const l of c.expireLeases(this.now)) {
            this.ok(this.held.includes(l.id), `expired lease ${l.id} was not held`);
            this.ok(l.expiresAt <= this.now, `lease ${l.id} expired before its time ${l.expiresAt}`);
            this.held = this.held.filter((x) => x !== l.id);
          }
        this.pump();
        break;
      case "limit": {
        const { minConcurrency: lo, maxConcurrency: hi } = c.config;
        const limit = Math.min(hi, lo + Math.floor(o.at * (hi - lo + 1)));
        this.ok(c.configure({ limit }, this.now, checkBounds) === null, `configure({ limit: ${limit} }) accepted`);
        this.ok(c.aimd.limit === limit, `configure({ limit: ${limit} }) sets the limit`);
        break;
      }
      case "follow":
        this.follow();
        break;
    }
    this.checkState();
  }

  /** (L1) Pump only when wakeAt says; something must happen within 3 wake-ups. */
  follow(): void {
    for (let i = 0; i < 3; i++) {
      if (this.core.queue.size === 0) return;
      const t = this.core.wakeAt(this.now);
      this.ok(t !== null && Number.isFinite(t) && t >= this.now, `wakeAt(${this.now}) is a finite time >= now while someone waits (got ${t})`);
      this.now = t;
      const r = this.pump();
      this.checkState();
      if (r.granted.length + r.expired.length > 0) return;
    }
    this.ok(false, "(L1) 3 wake-ups at wakeAt granted and expired nobody");
  }

  /** (L2) Make the key idle (everyone cancelled, every lease released), wait out the gate and a full refill; a new waiter must go at once. */
  recover(cost: number): void {
    const c = this.core;
    for (const e of this.line()) {
      this.ok(c.cancel(e.w.id)?.id === e.w.id, `(S4) cancel(${e.w.id}) while queued`);
      e.state = "cancelled";
    }
    for (const id of this.held) c.release(id, this.now);
    this.held = [];
    let refill = 0;
    for (const [w, overdraft] of [[c.quota.requests, 1], [c.quota.tokens, this.maxCost]] as const) {
      if (!w) continue;
      // A window with no known limit or no refill rate never refills in the model, by design: not asserted.
      if (w.limit === null || w.refillPerMs <= 0) return;
      // From the lowest level the model can hold: a reading owes the grants made after it, down to
      // minus one window, and an oversize request goes when the window is full and overdraws it.
      refill = Math.max(refill, Math.ceil((2 * w.limit + overdraft) / w.refillPerMs));
    }
    this.now = Math.max(this.now, c.cooldownUntil) + refill + 1;
    this.checkState();
    const e = this.enqueue(false, cost, this.now + DAY);
    this.ok(e.state === "queued", `(L2) a waiter of cost ${cost} is refused by an idle key`);
    const { granted } = this.pump();
    this.checkState();
    this.ok(granted.some((w) => w.id === e.w.id), `(L2) an idle key with the gate open and every window refilled does not grant a waiter of cost ${cost}`);
  }

  checkState(): void {
    const c = this.core;
    // Line by line: the queue lists its lines one after another, each in the model's order.
    const key = (w: Waiter) => `${w.lane ?? "normal"}|${w.caller ?? DEFAULT_CALLER}`;
    const byLine = (ws: Waiter[]) => [...Map.groupBy(ws, key)].map(([k, g]) => `${k}:${g.map((w) => w.id).join(",")}`).sort();
    const want = byLine(this.line().map((e) => e.w));
    const got = byLine([...c.queue]);
    this.ok(got.length === want.length && got.every((l, i) => l === want[i]), `(S4/F) queue is ${JSON.stringify(got)}, model says ${JSON.stringify(want)}`);
    this.ok(c.queue.size === this.line().length, "queue.size matches");
    this.ok(c.leases.size === this.held.length && this.held.every((id) => c.leases.has(id)), `(S8) leases ${JSON.stringify([...c.leases.values()].map((l) => l.id))}, model holds ${JSON.stringify(this.held)}`);
    this.ok(c.cooldownUntil >= this.lastCooldown, `(S8) cooldownUntil moved back from ${this.lastCooldown}`);
    this.lastCooldown = c.cooldownUntil;
    const { minConcurrency: lo, maxConcurrency: hi } = c.config;
    this.ok(Number.isInteger(c.aimd.limit) && c.aimd.limit >= lo && c.aimd.limit <= hi, `(S8) limit ${c.aimd.limit} within [${lo}, ${hi}]`);
  }

  run(ops: Op[]): void {
    this.checkState();
    ops.forEach((o, i) => {
      this.step = i;
      this.apply(o);
    });
  }
}

// ---------------------------------------------------------------------------------------------

describe("LimiterCore under random operation sequences", () => {
  it("(F, S1-S8) FIFO with a head for retries, limit, gate, quota, exactly-once resolution, expiry", () => {
    fc.assert(
      fc.property(config, fc.array(opsFor(false), { maxLength: 80, size: "max" }), (cfg, ops) => {
        const h = new Harness(cfg);
        h.run(ops);
        // End of run: play out the time, so everyone still queued is granted or expires.
        for (let i = 0; i < 400 && h.core.queue.size > 0; i++) {
          h.step = ops.length + i;
          h.apply({ k: "tick", dt: 1_000 + (i % 7) * 10_000, expireLeases: true });
          if (i % 3 === 0) h.apply({ k: "release", pick: i });
        }
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it("(F per caller and lane, S1-S8) with callers and lanes: each caller's line FIFO with its retries first, and the same limit, gate, quota and resolution", () => {
    fc.assert(
      fc.property(config, fc.array(opsFor(false, true), { maxLength: 80, size: "max" }), (cfg, ops) => {
        const h = new Harness(cfg);
        h.run(ops);
        for (let i = 0; i < 400 && h.core.queue.size > 0; i++) {
          h.step = ops.length + i;
          h.apply({ k: "tick", dt: 1_000 + (i % 7) * 10_000, expireLeases: true });
          if (i % 3 === 0) h.apply({ k: "release", pick: i });
        }
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it("(L1, L2) with callers and lanes: the alarm chain makes progress, and an idle key recovers", () => {
    fc.assert(
      fc.property(config, fc.array(opsFor(true, true), { maxLength: 80, size: "max" }), cost, (cfg, ops, probeCost) => {
        const h = new Harness(cfg);
        h.run([...ops, { k: "follow" }]);
        h.step = ops.length + 1;
        h.recover(probeCost);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it("(L1) the alarm chain makes progress: pumping at wakeAt grants or expires someone within 3 wake-ups", () => {
    fc.assert(
      fc.property(config, fc.array(opsFor(true), { maxLength: 80, size: "max" }), (cfg, ops) => {
        new Harness(cfg).run([...ops, { k: "follow" }]);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);

  it("(L2) an idle key recovers: after a full refill with nothing in flight, a new waiter goes at once", () => {
    fc.assert(
      fc.property(config, fc.array(opsFor(false), { maxLength: 80, size: "max" }), cost, (cfg, ops, probeCost) => {
        const h = new Harness(cfg);
        h.run(ops);
        h.step = ops.length;
        h.recover(probeCost);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});

/*
 * Regression: found by L1 and L2. The quota model once kept a `used` count of grants since the
 * last reading that only went back to 0 when a new reading arrived, capped the refill before
 * subtracting it, and so never gave granted units back with time: with no new reading (network
 * errors, 5xx, headerless providers) a key could stall for good. Grants now draw from the bucket's
 * level, which refills with time. These pin the shrunk counterexamples.
 */
describe("pinned counterexamples (quota: granted units refill with time)", () => {
  const cfg1: LimiterConfig = { minConcurrency: 1, startConcurrency: 1, maxConcurrency: 1, decreaseFactor: 0.05, scaleUpPercent: 1, cooldownMs: 0, leaseTtlMs: 1000 };

  it("(L2) fast-check's shrunk counterexample: tokens window of 1, one grant of cost 1, then never again", () => {
    // Counterexample: [cfg1, [settle(tokens {limit 1, remaining 1}), enqueue(cost 1, deadline +1), tick(0)], probe cost 1]
    const h = new Harness(cfg1);
    h.run([
      { k: "settle", pick: 0, cls: "success", attempt: 1, retryAfterMs: null, requests: null, tokens: { limit: 1, remaining: 1, resetIn: null } },
      { k: "enqueue", retry: false, cost: 1, deadlineIn: 1 },
      { k: "tick", dt: 0, expireLeases: false },
    ]);
    h.step = 3;
    h.recover(1); // at now=120001, nobody queued, inFlight 0, gate open: w1 must be granted
  });

  it("(L1) fast-check's shrunk counterexample: wakeAt promises a time at which nothing can go", () => {
    const cfg: LimiterConfig = { ...cfg1, startConcurrency: 2, maxConcurrency: 2 };
    const h = new Harness(cfg);
    h.run([
      { k: "settle", pick: 0, cls: "success", attempt: 1, retryAfterMs: null, requests: null, tokens: { limit: 11, remaining: 11, resetIn: null } },
      { k: "enqueue", retry: false, cost: 1, deadlineIn: 1 },
      { k: "follow" },
      { k: "enqueue", retry: false, cost: 11, deadlineIn: 16366 },
      { k: "follow" }, // the wake-ups at 5455, 10910, 16365 must grant or expire someone
    ]);
  });

  it("a key whose 3-requests/min window saw three network errors comes back once the window refills", () => {
    const core = new LimiterCore({ ...cfg1, startConcurrency: 4, maxConcurrency: 4 });
    const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
    const settle = (id: string, cls: OutcomeClass, info: RateLimitInfo, now: number) =>
      core.settle(id, { cls, status: cls === "success" ? 200 : 0, info, latencyMs: 100, attempt: 1, final: false }, now);
    settle("seed", "success", { ...NONE, requests: { limit: 3, remaining: 3, resetAt: null } }, 0);
    for (const id of ["a", "b", "c"]) core.enqueue({ id, cost: 1, deadline: 120_000, retry: false, enqueuedAt: 0 }, 0);
    // The last unit waits SEND_JITTER_MS for a little more refill than it needs.
    expect([...core.pump(0).granted, ...core.pump(SEND_JITTER_MS).granted].map((w) => w.id)).toEqual(["a", "b", "c"]);
    for (const id of ["a", "b", "c"]) {
      settle(id, "transient", NONE, 10); // a network error: no headers, so no reading
      core.release(id, 10);
    }
    const later = 10 * 60_000; // ten minutes on: the provider's window has refilled three times over
    expect(core.enqueue({ id: "d", cost: 1, deadline: later + 120_000, retry: false, enqueuedAt: later }, later)).toEqual({ kind: "queued" });
    expect(core.inFlight).toBe(0);
    expect(core.cooldownUntil).toBeLessThan(later);
    expect(core.pump(later).granted.map((w) => w.id)).toEqual(["d"]); // fails: [] (requests window: used 3 of 3, forever)
  });
});
