import fc from "fast-check";
import { describe, it } from "vitest";
import { RUNS, TIMEOUT } from "./runs";
import { DEFAULT_LIMITER, type LimiterConfig } from "../../src/config/limits";
import { LimiterCore, type Outcome, renewEvery, SEND_JITTER_MS } from "../../src/limiter/core";
import { available, type QuotaWindow } from "../../src/limiter/quota";
import { isTicket } from "../../src/limiter/tickets/book";
import type { Op as LimiterOp } from "../../src/limiter/types";
import { TICKET_LAPSE_MS, TICKET_VALID_MS, ticketsAtMost } from "../../src/limiter/tickets/policy";
import { HeldTickets } from "../../src/limiter/tickets/isolate";
import type { OutcomeClass, RateLimitInfo } from "../../src/policy/types";

/*
 * Tickets (issue 36) driven by random sequences: several isolates (the real HeldTickets, as each
 * isolate's channel keeps them) ask a key's core for tickets, send requests on them or through the
 * queue, report uses, settles and releases late and in order, give tickets back or let them lapse,
 * meet 429s and readings below the model, and the object restarts: with its lease rows written,
 * or (a restart within a flush) without its tickets', after which it holds back their share.
 *
 *   (T1) Never more out than the object knows: every request out upstream, on a ticket or a grant,
 *        holds a lease in the core until its release has reached it; after a restart that lost
 *        ticket rows, those out on them are no more than the slots held back for them. (Reports
 *        reach the object before time moves on by half a second: the channel sends them within
 *        LINGER_MS, and the lapse gives them a second.)
 *   (T2) Never past the limit: each grant and each ticket issued leaves the slots held (tickets
 *        among them) within the limit in force.
 *   (T3) Never more through a window than its model allows: each grant and each ticket is paid for
 *        by what the model's windows hold, on top of what every ticket out reserves; tickets out
 *        never reserve more than half of what a window holds when they are issued.
 *   (T4) Each request counted once: the windows' grant counts rise by exactly one per grant and
 *        per ticket used or lapsed, and not for a ticket given back unused; the tickets the object
 *        holds as unused are exactly those no use, settle, renewal or lapse has reached. A restart
 *        restores a ticket as unused only if its row says so (a used one is a request out, charged
 *        already). (ticket-lives.property.test.ts drives restarts from a flush's rows, late answers
 *        and lost isolates.)
 *   (T5) None issued while anyone waits, a claim is open, or the gate is shut; a 429 changes the
 *        epoch; an isolate uses no ticket of an epoch older than the last it heard, nor one past
 *        its time.
 */

type Reading = { requests: number; tokens: number } | null;
type Op =
  | { k: "arrive"; iso: number; cost: number }
  | { k: "ask"; iso: number }
  | { k: "deliver"; iso: number }
  | { k: "finish"; pick: number; cls: OutcomeClass; reading: Reading }
  | { k: "tick"; dt: number }
  | { k: "restart"; kept: boolean };

const ISOLATES = 3;
/** The windows' limits; readings are drawn as shares of them. */
interface Limits {
  requests: number;
  tokens: number;
}
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("arrive" as const), iso: fc.nat(ISOLATES - 1), cost: fc.integer({ min: 1, max: 400 }) }), weight: 8 },
  { arbitrary: fc.record({ k: fc.constant("ask" as const), iso: fc.nat(ISOLATES - 1) }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("deliver" as const), iso: fc.nat(ISOLATES - 1) }), weight: 4 },
  {
    arbitrary: fc.record({
      k: fc.constant("finish" as const),
      pick: fc.nat(),
      cls: fc.constantFrom<OutcomeClass>("success", "success", "success", "rate_limit", "transient"),
      reading: fc.option(fc.record({ requests: fc.double({ min: 0, max: 1, noNaN: true }), tokens: fc.double({ min: 0, max: 1, noNaN: true }) }), { freq: 2 }),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ k: fc.constant("tick" as const), dt: fc.oneof(fc.nat(100), fc.nat(3_000), fc.nat(70_000)) }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("restart" as const), kept: fc.boolean() }), weight: 1 },
);
const configArb: fc.Arbitrary<LimiterConfig> = fc
  .record({ start: fc.integer({ min: 1, max: 24 }), ttl: fc.constantFrom(5_000, 60_000) })
  .map(({ start, ttl }) => ({ ...DEFAULT_LIMITER, minConcurrency: 1, startConcurrency: start, maxConcurrency: 32, leaseTtlMs: ttl, cooldownMs: 1_000 }));
/** Tight windows (a few requests, a few requests' tokens) as well as roomy ones. */
const limitsArb: fc.Arbitrary<Limits> = fc.record({ requests: fc.integer({ min: 3, max: 60 }), tokens: fc.integer({ min: 400, max: 6_000 }) });

/** A window pays for `need` when what it holds now covers it and SEND_JITTER_MS of refill (the rule, written again). */
function pays(w: QuotaWindow | null, need: number, now: number): boolean {
  if (!w) return true;
  const size = w.capacity ?? w.limit;
  const padded = need + w.refillPerMs * SEND_JITTER_MS;
  return available(w, now) >= (size !== null ? Math.min(padded, size) : padded);
}

/** A request out upstream: whose it is, under which id the object knows it, and its cost. */
interface Out {
  iso: number;
  id: string;
  cost: number;
}

class Harness {
  core: LimiterCore;
  now = 0;
  step = -1;
  private lives = 0;
  private isolates = Array.from({ length: ISOLATES }, () => ({ held: new HeldTickets(), outbox: [] as LimiterOp[], heard: undefined as number | undefined }));
  private out: Out[] = [];
  /** Requests queued at the object, by lease id, and whose. */
  private waiting = new Map<string, { iso: number; cost: number }>();
  private seq = 0;
  /** Each ticket handed to an isolate: the epoch it came with, and when. */
  private issued = new Map<string, { epoch: number; at: number }>();
  /** The model of each ticket at the object: unused until its lapse, spent (charged once), or back. */
  private tix = new Map<string, { lapseAt: number; state: "idle" | "spent" | "back" | "unseen" }>();
  /** Tickets whose lease row a flush has written (at least a second after their issue, or restored). */
  private written = new Set<string>();
  /** Until when the object has written that tickets may be out (its `tickets` row). */
  private marked = { until: 0, slots: 0 };
  private restoring = false;
  /** Inside the core's issue: a ticket lease made then is a new ticket (one restored or taken up after a restart is not). */
  private issuing = false;
  /** Charges expected on the windows since this life began (T4). */
  private charges = 0;
  private base = 0;

  constructor(private cfg: LimiterConfig, private limits: Limits) {
    this.core = this.life();
    // A key past its opening, with windows known.
    const info: RateLimitInfo = { retryAfterMs: null, requests: { limit: limits.requests, remaining: limits.requests, resetAt: null }, tokens: { limit: limits.tokens, remaining: limits.tokens, resetAt: null } };
    this.core.settle("seed", { cls: "success", status: 200, info, latencyMs: 10, attempt: 1, final: true }, 0);
    this.now = 10_000;
    this.rebase();
  }

  ok(cond: boolean, what: string): asserts cond {
    if (cond) return;
    const c = this.core;
    throw new Error(`${what}\n  at step ${this.step}, now=${this.now}, busy=${c.busy}, idle=${c.leases.idle}, limit=${c.limitAt(this.now)}, queued=${c.queue.size}, reserved=${JSON.stringify(c.tickets.reserved)}`);
  }

  /** A new life of the object; its grants and tickets are checked as they are made (T2, T3). */
  private life(saved?: LimiterCore): LimiterCore {
    const core = new LimiterCore(this.cfg, saved?.persisted(), undefined, { epoch: 1_000 * ++this.lives, prefix: `l${this.lives}` });
    const grant = core.leases.grant.bind(core.leases);
    core.leases.grant = (id, cost, now, ttl, caller) => {
      // Slots held: leases (tickets among them) and those held back after a restart, counted here, not by core.busy.
      this.ok(core.leases.busy + core.tickets.unseenSlots + 1 <= core.limitAt(now), `(T2) grant of ${id} past the limit`);
      // The model's own count of what the tickets out reserve, not the core's.
      const idle = [...this.tix].filter(([, t]) => t.state === "idle").map(([i]) => core.lease(i)?.cost ?? 0);
      const r = { requests: idle.length, tokens: idle.reduce((a, b) => a + b, 0) };
      this.ok(pays(core.quota.requests, 1 + r.requests, now) && pays(core.quota.tokens, cost + r.tokens, now), `(T3) grant of ${id} (cost ${cost}) the windows cannot pay for on top of the tickets out`);
      this.charges++;
      return grant(id, cost, now, ttl, caller);
    };
    const ticket = core.leases.ticket.bind(core.leases);
    core.leases.ticket = (id, cost, expiresAt, lapseAt) => {
      const lease = ticket(id, cost, expiresAt, lapseAt);
      if (this.issuing) {
        this.ok(core.leases.busy + core.tickets.unseenSlots <= core.limitAt(this.now), `(T2) ticket ${id} past the limit`);
        this.ok(core.queue.size === 0 && core.claims.size === 0 && core.cooldownUntil <= this.now, `(T5) ticket ${id} while someone waits or the gate is shut`);
        // The book has it already: what every ticket out reserves, this one included.
        const r = core.tickets.reserved;
        for (const [w, need] of [[core.quota.requests, r.requests], [core.quota.tokens, r.tokens]] as const)
          this.ok(!w || available(w, this.now) >= 2 * need - 1e-6, `(T3) ticket ${id}: the tickets out would hold more than half of a window`);
      }
      return lease;
    };
    return core;
  }

  /**
   * A ticket is reached by its use, its settle or a renewal: charged once, if it was unused. One
   * the restarted object never saw takes a slot held back for it (while any is) on its use or a
   * renewal; with none left, its use is a request out all the same (held and charged), a renewal
   * takes its lease back uncharged; its settle ends it, which needs no slot.
   */
  private spend(id: string, via: "use" | "renew" | "settle" | "lapse"): void {
    const t = this.tix.get(id);
    if (t?.state === "unseen" && via !== "settle" && (this.core.tickets.unseenSlots > 0 || via === "use")) t.state = "idle";
    if (t?.state !== "idle") return;
    t.state = "spent";
    this.charges++;
  }

  /** The object counts a ticket as used at its lapse, when it next looks (a pump, an issue, a sweep). */
  private lapses(): void {
    for (const [id, t] of this.tix) if (t.state === "idle" && t.lapseAt <= this.now) this.spend(id, "lapse");
  }

  private rebase(): void {
    this.base = this.core.quota.granted.requests;
    this.charges = 0;
  }

  /** An isolate hears an answer: the key's epoch, and tickets if it asked. */
  private hear(iso: number, tickets?: { ids: string[]; cost: number }): void {
    const i = this.isolates[iso]!;
    i.heard = this.core.epoch;
    for (const id of tickets?.ids ?? []) {
      this.issued.set(id, { epoch: this.core.epoch, at: this.now });
      this.tix.set(id, { lapseAt: this.now + TICKET_LAPSE_MS, state: "idle" });
    }
    // As the object writes it: once it hands tickets out, that they may be out for a minute, and how many at most.
    const most = ticketsAtMost(this.core.limitAt(this.now));
    if (tickets?.ids.length && (this.marked.until < this.now + TICKET_LAPSE_MS || this.marked.slots < most))
      this.marked = { until: this.now + 60_000, slots: Math.max(most, this.marked.until > this.now ? this.marked.slots : 0) };
    const back = i.held.heard({ epoch: this.core.epoch, ...(tickets && tickets.ids.length > 0 && { tickets: { ...tickets, leaseTtlMs: this.cfg.leaseTtlMs, limit: 1 } }) }, this.now);
    for (const id of back) i.outbox.push({ t: "release", id });
  }

  /** An isolate's outbox reaches the object, in order (the channel never lets a lease's op overtake an earlier one). */
  private deliver(iso: number): void {
    const i = this.isolates[iso]!;
    for (const id of i.held.expired(this.now)) i.outbox.push({ t: "release", id });
    for (const op of i.outbox.splice(0)) {
      const c = this.core;
      if (op.t === "use") {
        this.spend(op.id, "use");
        c.useTicket(op.id, op.cost, this.now);
      } else if (op.t === "settle") {
        this.spend(op.id, "settle");
        c.settle(op.id, op.outcome, this.now);
        c.release(op.id, this.now);
        this.out = this.out.filter((o) => o.id !== op.id);
      } else if (op.t === "release") {
        const t = this.tix.get(op.id);
        if (t?.state === "idle") t.state = "back";
        c.release(op.id, this.now);
        this.out = this.out.filter((o) => o.id !== op.id);
      }
    }
    this.pump();
  }

  private pump(): void {
    this.lapses();
    const { granted, expired } = this.core.pump(this.now);
    for (const w of granted) {
      const who = this.waiting.get(w.id)!;
      this.waiting.delete(w.id);
      this.out.push({ iso: who.iso, id: w.id, cost: w.cost });
    }
    for (const w of expired) this.waiting.delete(w.id);
  }

  apply(o: Op): void {
    const c = this.core;
    switch (o.k) {
      case "arrive": {
        const i = this.isolates[o.iso]!;
        const t = i.held.take(o.cost, this.now);
        if (t) {
          const issued = this.issued.get(t.id)!;
          this.ok(issued.epoch === i.heard, `(T5) ${t.id} of epoch ${issued.epoch} used after the isolate heard ${i.heard}`);
          this.ok(this.now < issued.at + TICKET_VALID_MS, `(T5) ${t.id} used past its time`);
          this.out.push({ iso: o.iso, id: t.id, cost: o.cost });
          i.outbox.push({ t: "use", id: t.id, cost: o.cost });
          break;
        }
        const id = `r${this.seq++}`;
        this.waiting.set(id, { iso: o.iso, cost: o.cost });
        c.enqueue({ id, cost: o.cost, deadline: this.now + 120_000, retry: false, enqueuedAt: this.now }, this.now);
        this.pump();
        break;
      }
      case "ask": {
        const ask = this.isolates[o.iso]!.held.ask(this.now);
        this.deliver(o.iso);
        if (ask) this.lapses();
        this.issuing = true;
        const ids = ask ? c.issue(ask, this.now) : [];
        this.issuing = false;
        this.hear(o.iso, ask && { ids, cost: ask.cost });
        break;
      }
      case "deliver":
        this.deliver(o.iso);
        this.hear(o.iso);
        break;
      case "finish": {
        if (this.out.length === 0) break;
        const r = this.out[o.pick % this.out.length]!;
        const info: RateLimitInfo = {
          retryAfterMs: o.cls === "rate_limit" ? 500 : null,
          requests: o.reading && { limit: this.limits.requests, remaining: Math.floor(o.reading.requests * this.limits.requests), resetAt: null },
          tokens: o.reading && { limit: this.limits.tokens, remaining: Math.floor(o.reading.tokens * this.limits.tokens), resetAt: null },
        };
        const outcome: Outcome = { cls: o.cls, status: o.cls === "success" ? 200 : o.cls === "rate_limit" ? 429 : 503, info, latencyMs: 100, attempt: 1, final: true };
        const epoch = c.epoch;
        // A 429 is settled at once (a retry waits on it); an answer rides the isolate's next batch.
        this.isolates[r.iso]!.outbox.push({ t: "settle", id: r.id, outcome });
        if (o.cls === "rate_limit") {
          this.deliver(r.iso);
          this.ok(this.core.epoch !== epoch, "(T5) a 429 changes the epoch");
          this.hear(r.iso);
        }
        break;
      }
      case "tick": {
        // A long step: the reports on their way arrive first, and the requests out renew their
        // leases (their Workers do every third of a lease's time), so none of theirs expires.
        const long = o.dt >= 500;
        if (long) for (let i = 0; i < ISOLATES; i++) this.deliver(i);
        // A flush every second writes the lease rows.
        if (o.dt >= 1_000) for (const l of c.leases.values()) if (isTicket(l.id)) this.written.add(l.id);
        this.now += o.dt;
        if (long)
          for (const r of this.out) {
            this.spend(r.id, "renew");
            c.renew(r.id, this.now, r.cost);
          }
        this.lapses();
        c.expireLeases(this.now);
        this.pump();
        break;
      }
      case "restart": {
        const leases = [...c.leases.values()];
        this.ok(this.core.quota.granted.requests - this.base === this.charges, `(T4) ${this.core.quota.granted.requests - this.base} charges for ${this.charges} requests before the restart`);
        this.core = this.life(c);
        this.restoring = true;
        const grace = renewEvery(this.cfg.leaseTtlMs) + 5_000;
        // Rows written by a flush, or (within one) every row but those of the tickets not used yet
        // and not written. (Any lease may miss its row within a flush; a renewal takes it back, as
        // before tickets. What is new is a ticket an isolate may still use, unknown to the object.)
        const rows = o.kept ? leases : leases.filter((l) => l.ticket === undefined || this.written.has(l.id));
        for (const l of rows) this.core.restoreLease(l.id, l.cost, Math.min(l.expiresAt, this.now + grace), this.now, l.ticket !== undefined);
        if (this.now < this.marked.until) this.core.holdBack(this.now, this.marked.slots);
        this.restoring = false;
        // A restored unused ticket lapses from the restart: an isolate may still use it meanwhile.
        // A used one is a request out, charged already. One not written is unseen.
        for (const [id, t] of this.tix) {
          if (this.core.lease(id)?.ticket !== undefined) Object.assign(t, { state: "idle", lapseAt: this.now + TICKET_LAPSE_MS });
          else if (!this.core.lease(id) && c.lease(id)?.ticket !== undefined) t.state = "unseen";
        }
        this.written = new Set(rows.filter((l) => isTicket(l.id)).map((l) => l.id));
        this.rebase();
        // The waiters' calls failed with the old object; their Workers give up here.
        this.waiting.clear();
        break;
      }
    }
    this.check();
  }

  check(): void {
    const c = this.core;
    const unknown = this.out.filter((r) => !c.leases.has(r.id));
    this.ok(unknown.length <= c.tickets.unseenSlots, `(T1) ${unknown.map((r) => r.id)} out upstream, unknown to the object, with ${c.tickets.unseenSlots} slots held back`);
    let idle = 0;
    let tokens = 0;
    for (const l of c.leases.values())
      if (l.ticket !== undefined) {
        idle++;
        tokens += l.cost;
        this.ok(isTicket(l.id), `${l.id} is a ticket lease without a ticket's id`);
      }
    this.ok(idle === c.leases.idle && idle === c.tickets.size, `the idle tickets (${idle}) are the book's (${c.tickets.size})`);
    const unused = [...this.tix].filter(([, t]) => t.state === "idle").map(([id]) => id).sort();
    const held = [...c.leases.values()].filter((l) => l.ticket !== undefined).map((l) => l.id).sort();
    this.ok(JSON.stringify(unused) === JSON.stringify(held), `(T4) the object holds ${JSON.stringify(held)} as unused tickets, the model ${JSON.stringify(unused)}`);
    const unseen = c.tickets.unseenSlots;
    this.ok(c.tickets.reserved.requests === idle + unseen && (unseen > 0 ? c.tickets.reserved.tokens >= tokens - 1e-6 : Math.abs(c.tickets.reserved.tokens - tokens) < 1e-6), "the reservations are the idle tickets' costs, and what is held back for unseen ones");
    this.ok(c.quota.granted.requests - this.base === this.charges, `(T4) ${c.quota.granted.requests - this.base} charges for ${this.charges} requests`);
  }
}

describe("tickets under random issues, uses, returns, lapses, 429s and restarts", () => {
  it("(T1-T5) never more out than the object knows, past the limit, or through a window than its model allows", () => {
    fc.assert(
      fc.property(configArb, limitsArb, fc.array(opArb, { maxLength: 120, size: "max" }), (cfg, limits, ops) => {
        const h = new Harness(cfg, limits);
        ops.forEach((o, i) => {
          h.step = i;
          h.apply(o);
        });
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
