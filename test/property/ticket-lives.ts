// The model behind ticket-lives.property.test.ts: a key's object through its lives (a flush writes
// its lease rows with its windows; a restart reads the last flush back), and isolates (the real
// HeldTickets) whose answers arrive in any order, which die and are replaced. It checks:
//
//   (L1) never past the limit: each grant and each ticket issued leaves the slots held within it;
//   (L2) each request charged once: a ticket's charges that outlive their life (made before a flush
//        that the next life reads) are at most one, whatever the restarts;
//   (L3) no stale ticket used: an isolate uses only a ticket of the newest epoch it has heard;
//   (L4) slots come back: a lease restored after a restart that nobody renews or uses is gone by
//        the restore grace; a dead isolate's leases by their lease's time (a ticket: its lapse's);
//   (L5) never more out than the object knows: a live isolate's request whose use or grant reached
//        the object (or, after a restart, whose renewal did) holds a lease there.
import { type LimiterConfig } from "../../src/config/limits";
import { LimiterCore, type Outcome, renewEvery } from "../../src/limiter/core";
import { EPOCH_SPAN } from "../../src/limiter/tickets/epoch";
import type { Persisted } from "../../src/limiter/state";
import { TICKET_LAPSE_MS, ticketsAtMost } from "../../src/limiter/tickets/policy";
import type { Op as LimiterOp } from "../../src/limiter/types";
import type { OutcomeClass, RateLimitInfo } from "../../src/policy/types";
import { HeldTickets } from "../../src/limiter/tickets/isolate";

export type LifeOp =
  | { k: "arrive"; iso: number; cost: number }
  | { k: "send"; iso: number }
  | { k: "hear"; iso: number; pick: number }
  | { k: "finish"; pick: number; cls: OutcomeClass }
  | { k: "tick"; dt: number }
  | { k: "kill"; iso: number }
  | { k: "flush" }
  | { k: "restart" };

export const ISOLATES = 3;

/** An answer on its way to an isolate: the key's epoch then, the tickets it brings, the isolate's mark when its call left. */
interface Reply {
  epoch: number;
  tickets?: { ids: string[]; cost: number };
  mark: number;
  sentAt: number;
}

interface Isolate {
  held: HeldTickets;
  outbox: LimiterOp[];
  inbox: Reply[];
  newest: number;
}

/** A request of a live isolate out upstream; `known`: its grant or use reached the object (or its renewal, after a restart). */
interface Out {
  iso: number;
  id: string;
  cost: number;
  known: boolean;
}

const info = (limit: number, remaining: number): RateLimitInfo => ({ retryAfterMs: null, requests: { limit, remaining, resetAt: null }, tokens: null });
const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export class Lives {
  now = 10_000;
  step = -1;
  core: LimiterCore;
  private life = 0;
  private base = 0;
  private isolates: Isolate[] = [];
  private out: Out[] = [];
  private waiting = new Map<string, { iso: number; cost: number; mark: number }>();
  private seq = 0;
  /** Each ticket's epoch at its issue. */
  private epochOf = new Map<string, number>();
  /** Ticket charges, numbered: a restart drops those after the last flush (their windows were not written). */
  private charges = new Map<string, number[]>();
  private charged = 0;
  private flushed: { charged: number; persisted: Persisted; rows: { id: string; cost: number; expires: number; unused: boolean }[] };
  /** Until when tickets may be out, and how many at most: written at issue, before the answer leaves. */
  private marked = { until: 0, slots: 0 };
  /** Leases nobody is there to renew (restored ones until renewed or used; a dead isolate's), and when each must be gone. */
  private due = new Map<string, number>();
  private issuing = false;
  private readonly grace: number;

  constructor(private cfg: LimiterConfig, private limit: number) {
    this.grace = renewEvery(cfg.leaseTtlMs) + 5_000;
    for (let i = 0; i < ISOLATES; i++) this.isolates.push(this.isolate());
    this.core = this.start(undefined);
    this.core.enqueue({ id: "seed", cost: 1, deadline: 1e12, retry: false, enqueuedAt: 0 }, 0);
    this.core.pump(0);
    this.core.settle("seed", { cls: "success", status: 200, info: info(limit, limit), latencyMs: 10, attempt: 1, final: true }, 0);
    this.core.release("seed", 0);
    this.flushed = this.snapshot();
  }

  ok(cond: boolean, what: string): asserts cond {
    if (cond) return;
    throw new Error(`${what}\n  at step ${this.step}, now=${this.now}, life=${this.life}, busy=${this.core.busy}, limit=${this.core.limitAt(this.now)}, epoch=${this.core.epoch}`);
  }

  private isolate(): Isolate {
    return { held: new HeldTickets(), outbox: [], inbox: [], newest: -Infinity };
  }

  /** A life of the object: its first epoch above the last's; its grants, tickets and ticket charges watched. */
  private start(saved: Persisted | undefined): LimiterCore {
    this.base = this.life++ === 0 ? 5 : this.base + EPOCH_SPAN;
    const core = new LimiterCore(this.cfg, saved && clone(saved), undefined, { epoch: this.base, prefix: `l${this.life}` });
    const grant = core.leases.grant.bind(core.leases);
    core.leases.grant = (id, cost, now, ttl, caller) => {
      this.ok(core.leases.busy + core.tickets.unseenSlots + 1 <= core.limitAt(now), `(L1) grant of ${id} past the limit`);
      return grant(id, cost, now, ttl, caller);
    };
    const ticket = core.leases.ticket.bind(core.leases);
    core.leases.ticket = (id, cost, expiresAt, lapseAt) => {
      const lease = ticket(id, cost, expiresAt, lapseAt);
      if (this.issuing) this.ok(core.leases.busy + core.tickets.unseenSlots <= core.limitAt(this.now), `(L1) ticket ${id} past the limit`);
      return lease;
    };
    const use = core.leases.use.bind(core.leases);
    core.leases.use = (id, now, ttl, caller, extend) => {
      if (core.leases.get(id)?.ticket !== undefined) this.charges.set(id, [...(this.charges.get(id) ?? []), ++this.charged]);
      return use(id, now, ttl, caller, extend);
    };
    return core;
  }

  /** What a flush writes: the windows and every lease's row, saying whether a ticket was used. */
  private snapshot() {
    const rows = [...this.core.leases.values()].map((l) => ({ id: l.id, cost: l.cost, expires: l.expiresAt, unused: l.ticket !== undefined }));
    return { charged: this.charged, persisted: clone(this.core.persisted()), rows };
  }

  /** An isolate's batch reaches the object: its ops in order, then a pump. */
  private deliver(i: number): void {
    const iso = this.isolates[i]!;
    for (const id of iso.held.expired(this.now)) iso.outbox.push({ t: "release", id });
    const c = this.core;
    for (const op of iso.outbox.splice(0)) {
      if (op.t === "use") {
        c.useTicket(op.id, op.cost, this.now);
        this.due.delete(op.id);
        for (const r of this.out) if (r.id === op.id) r.known = true;
      } else if (op.t === "settle") {
        c.settle(op.id, op.outcome, this.now);
        c.release(op.id, this.now);
        this.out = this.out.filter((r) => r.id !== op.id);
      } else if (op.t === "release") c.release(op.id, this.now);
    }
    this.pump();
  }

  private pump(): void {
    const { granted, expired } = this.core.pump(this.now);
    for (const w of granted) {
      const who = this.waiting.get(w.id)!;
      this.waiting.delete(w.id);
      this.out.push({ iso: who.iso, id: w.id, cost: w.cost, known: true });
      this.isolates[who.iso]!.inbox.push({ epoch: this.core.epoch, mark: who.mark, sentAt: this.now });
    }
    for (const w of expired) this.waiting.delete(w.id);
  }

  apply(o: LifeOp): void {
    const c = this.core;
    switch (o.k) {
      case "arrive": {
        const iso = this.isolates[o.iso]!;
        const t = iso.held.take(o.cost, this.now);
        if (t) {
          this.ok(this.epochOf.get(t.id) === iso.newest, `(L3) ${t.id} of epoch ${this.epochOf.get(t.id)} used after the isolate heard ${iso.newest}`);
          this.out.push({ iso: o.iso, id: t.id, cost: o.cost, known: false });
          iso.outbox.push({ t: "use", id: t.id, cost: o.cost });
          break;
        }
        const id = `r${this.seq++}`;
        this.waiting.set(id, { iso: o.iso, cost: o.cost, mark: iso.held.mark });
        c.enqueue({ id, cost: o.cost, deadline: this.now + 120_000, retry: false, enqueuedAt: this.now }, this.now);
        this.pump();
        break;
      }
      case "send": {
        const iso = this.isolates[o.iso]!;
        const mark = iso.held.mark;
        const ask = iso.held.ask(this.now);
        this.deliver(o.iso);
        this.issuing = true;
        const ids = ask ? c.issue(ask, this.now) : [];
        this.issuing = false;
        for (const id of ids) this.epochOf.set(id, c.epoch);
        if (ids.length > 0 && (this.marked.until < this.now + TICKET_LAPSE_MS || this.marked.slots < ticketsAtMost(c.limitAt(this.now))))
          this.marked = { until: this.now + 60_000, slots: Math.max(ticketsAtMost(c.limitAt(this.now)), this.marked.until > this.now ? this.marked.slots : 0) };
        iso.inbox.push({ epoch: c.epoch, ...(ids.length > 0 && { tickets: { ids, cost: ask!.cost } }), mark, sentAt: this.now });
        break;
      }
      case "hear": {
        // Up to three answers reach the isolate, each picked from those on their way.
        const iso = this.isolates[o.iso]!;
        for (let n = 0; n < 3 && iso.inbox.length > 0; n++) {
          const [r] = iso.inbox.splice((o.pick >> (4 * n)) % iso.inbox.length, 1);
          iso.newest = Math.max(iso.newest, r!.epoch);
          const tickets = r!.tickets && { ...r!.tickets, leaseTtlMs: this.cfg.leaseTtlMs, limit: 1 };
          for (const id of iso.held.heard({ epoch: r!.epoch, ...(tickets && { tickets }) }, r!.sentAt, r!.mark)) iso.outbox.push({ t: "release", id });
        }
        break;
      }
      case "finish": {
        if (this.out.length === 0) break;
        const r = this.out[o.pick % this.out.length]!;
        // A 429 says its window is empty (it holds the key for its hint and takes the tickets back; no cut).
        const refused = o.cls === "rate_limit";
        const outcome: Outcome = { cls: o.cls, status: refused ? 429 : 200, info: refused ? { ...info(this.limit, 0), retryAfterMs: 500 } : info(this.limit, this.limit), latencyMs: 100, attempt: 1, final: true };
        const iso = this.isolates[r.iso]!;
        iso.outbox.push({ t: "settle", id: r.id, outcome });
        // Its settle and release leave within LINGER_MS (a 429's at once: its retry waits on it);
        // the answer carries the key's epoch.
        const mark = iso.held.mark;
        this.deliver(r.iso);
        iso.inbox.push({ epoch: this.core.epoch, mark, sentAt: this.now });
        break;
      }
      case "tick": {
        if (o.dt >= 500) for (let i = 0; i < ISOLATES; i++) this.deliver(i);
        this.now += o.dt;
        // Live Workers renew what they have out (every third of a lease's time, so at least by now).
        for (const r of this.out) {
          c.renew(r.id, this.now, r.cost);
          r.known = true;
          this.due.delete(r.id);
        }
        c.expireLeases(this.now);
        this.pump();
        break;
      }
      case "kill": {
        // Its Worker dies: what it held, meant to send or was sent is lost; its slots must come back.
        // A ticket's lease may outlive its use by up to its lapse (a lease's time after the lapse).
        const by = this.now + TICKET_LAPSE_MS + this.cfg.leaseTtlMs;
        for (const r of this.out.filter((x) => x.iso === o.iso)) this.due.set(r.id, Math.min(this.due.get(r.id) ?? Infinity, by));
        for (const [id, w] of this.waiting) if (w.iso === o.iso) c.cancel(id), this.waiting.delete(id);
        this.out = this.out.filter((x) => x.iso !== o.iso);
        this.isolates[o.iso] = this.isolate();
        break;
      }
      case "flush":
        this.flushed = this.snapshot();
        break;
      case "restart": {
        // Charges made after the last flush went with the windows that held them.
        for (const [id, seqs] of this.charges) this.charges.set(id, seqs.filter((s) => s <= this.flushed.charged));
        this.core = this.start(this.flushed.persisted);
        for (const l of this.flushed.rows) {
          this.core.restoreLease(l.id, l.cost, Math.min(l.expires, this.now + this.grace), this.now, l.unused);
          this.due.set(l.id, this.now + this.grace);
        }
        if (this.now < this.marked.until) this.core.holdBack(this.now, this.marked.slots);
        // The constructor's alarm sweeps what expired while it was down.
        this.core.expireLeases(this.now);
        for (const r of this.out) r.known = false;
        // The waiters' calls failed with the old object; their Workers give up here.
        this.waiting.clear();
        this.flushed = { ...this.flushed, charged: this.charged };
        break;
      }
    }
    this.check();
  }

  check(): void {
    const c = this.core;
    for (const [id, seqs] of this.charges) this.ok(seqs.length <= 1, `(L2) ticket ${id} charged ${seqs.length} times (${seqs})`);
    for (const [id, by] of this.due) this.ok(this.now < by || !c.leases.has(id), `(L4) ${id} still held at ${this.now}, due back by ${by}`);
    for (const r of this.out) this.ok(!r.known || c.leases.has(r.id), `(L5) ${r.id} is out upstream and its grant or use reached the object, which holds no lease for it`);
  }
}
