import type { HistoryEntry } from "./aimd";
import type { Lease, LimiterCore, Outcome } from "./core";
import type { AcquireResult, Op, OpResult, SettleAnswer, SettleRequest } from "./types";
import type { Ask } from "./tickets/policy";
import { type Timers, Waiters, type WaiterRequest } from "./waiters";
import type { Waiter } from "./queue";

/**
 * What a driver's owner wants to hear about: the Durable Object journals leases and keeps its
 * counters; the batch runner and the simulator need none of it.
 */
export interface DriverHooks {
  granted?(w: Waiter, waitedMs: number): void;
  timedOut?(how: "expired" | "refused", waitedMs: number, retryAfterMs: number): void;
  /** Wraps one outcome going into the core (the object counts it and logs the limit change). */
  settled?(id: string, o: Outcome, now: number, apply: () => HistoryEntry | null): HistoryEntry | null;
  /** After an outcome went in and, if it said so, its slot was released. */
  answered?(o: Outcome, now: number): void;
  /** A renewal found no lease and took it back (the object had restarted before writing it). */
  takenBack?(lease: Lease): void;
  /** A lease left the core (released, or cancelled after its grant). */
  dropped?(id: string): void;
  /** Levels moved: `batch` is true inside `exchange`, which reports once at its end. */
  moved?(now: number): void;
  /** Tickets were issued (their leases are in the core). */
  issued?(ids: string[]): void;
}

/**
 * The one way calls reach a LimiterCore: the Durable Object, the batch runner's in-process limiter
 * and the simulator all drive it through this, so what a settle, a release or a cancel does to
 * the core and its queue cannot drift between them. Time comes from `now`; nothing here does I/O.
 */
export class LimiterDriver {
  readonly core: LimiterCore;
  readonly waiters: Waiters;
  #now: () => number;
  #hooks: DriverHooks;

  constructor(core: LimiterCore, now: () => number, hooks: DriverHooks = {}, timers?: Timers) {
    this.core = core;
    this.#now = now;
    this.#hooks = hooks;
    this.waiters = new Waiters(
      core,
      now,
      (w, waitedMs) => hooks.granted?.(w, waitedMs),
      (how, waitedMs, retryAfterMs) => hooks.timedOut?.(how, waitedMs, retryAfterMs),
      timers,
    );
  }

  acquire(req: WaiterRequest): Promise<AcquireResult> {
    return this.waiters.acquire(req);
  }

  /** One outcome, then the queue moves. Returns whether the limit changed, and when its retry may come. */
  settle(id: string, outcome: SettleRequest): { changed: boolean; answer: SettleAnswer } {
    const r = this.#applySettle(id, outcome, this.#now(), 0, true);
    this.waiters.pump();
    return r;
  }

  release(id: string): boolean {
    const had = this.#drop(id, this.#now(), true);
    this.waiters.pump();
    return had;
  }

  /** `cost`: what the lease was granted for, so a lease the core lost can be taken back. */
  renew(id: string, cost?: number): boolean {
    return this.#renewOne(id, this.#now(), cost);
  }

  /** The caller left: out of the queue (it must not be granted a slot nobody will use), or its slot back. */
  cancel(id: string): boolean {
    const had = this.#cancelOne(id, true);
    this.waiters.pump();
    return had;
  }

  /**
   * A batch of calls, applied in order with one pass over the queue at the end. Acquires answered
   * at once come back granted or refused, the rest `queued`, with the answer they will get in
   * `waiting` (by op index). `changed`: some settle moved the limit.
   */
  exchange(ops: Op[]): { results: OpResult[]; changed: boolean; waiting: Map<number, Promise<AcquireResult>> } {
    const now = this.#now();
    const results: OpResult[] = new Array(ops.length);
    const acquires: [number, string, Promise<AcquireResult>][] = [];
    let changed = false;
    const answers = this.waiters.round(() => {
      ops.forEach((op, i) => {
        const age = Math.max(0, op.ageMs ?? 0);
        switch (op.t) {
          case "acquire":
            acquires.push([i, op.req.leaseId, this.waiters.join({
              id: op.req.leaseId, cost: op.req.cost, out: op.req.out, retry: op.req.retry, deadline: now - age + Math.max(0, op.req.waitMs), caller: op.req.caller, lane: op.req.priority, pooled: op.req.pooled, tier: op.req.tier,
            })]);
            break;
          case "settle": {
            const r = this.#applySettle(op.id, op.outcome, now, age, false);
            changed = r.changed || changed;
            results[i] = r.answer;
            break;
          }
          case "release":
            results[i] = this.#drop(op.id, now - age, false);
            break;
          case "renew":
            results[i] = this.#renewOne(op.id, now, op.cost);
            break;
          case "cancel":
            results[i] = this.#cancelOne(op.id, false);
            break;
          case "use":
            results[i] = this.core.useTicket(op.id, op.cost, now, op.caller, op.priority, op.out);
            break;
        }
      });
    });
    // Every answer given in the round was captured; an acquire without one is still in line.
    const waiting = new Map<number, Promise<AcquireResult>>();
    for (const [i, id, answer] of acquires) {
      const got = answers.get(id);
      results[i] = got ?? { queued: true };
      if (!got) waiting.set(i, answer);
    }
    this.#hooks.moved?.(now);
    return { results, changed, waiting };
  }

  /** Tickets for an isolate that asks (tickets/policy.ts), after its batch; their ids (none: it asks as before). */
  issue(ask: Ask): string[] {
    const ids = this.core.issue(ask, this.#now());
    if (ids.length > 0) this.#hooks.issued?.(ids);
    return ids;
  }

  /** Grants whoever may go now (a timer, an alarm, a new config). */
  pump(): number {
    return this.waiters.pump();
  }

  close(): void {
    this.waiters.close();
  }

  /**
   * `age`: how long ago the caller saw this outcome (it waited for a batch): the attempt was sent,
   * and its slot let go, that much earlier. `note`: report the levels now (a batch does at its end).
   */
  #applySettle(id: string, outcome: SettleRequest, now: number, age: number, note: boolean): { changed: boolean; answer: SettleAnswer } {
    const o = age > 0 ? { ...outcome, ageMs: age } : outcome;
    const apply = () => this.core.settle(id, o, now);
    const changed = this.#hooks.settled ? this.#hooks.settled(id, o, now, apply) : apply();
    if (outcome.release) this.#drop(id, now - age, note);
    this.#hooks.answered?.(o, now);
    return { changed: changed !== null, answer: this.core.retryWord(o, now) };
  }

  #renewOne(id: string, now: number, cost?: number): boolean {
    const known = this.core.renew(id, now, cost);
    const lease = known ? undefined : this.core.lease(id);
    if (lease) this.#hooks.takenBack?.(lease);
    return known;
  }

  #cancelOne(id: string, note: boolean): boolean {
    const wasWaiting = this.waiters.cancel(id);
    if (wasWaiting && note) this.#hooks.moved?.(this.#now());
    return wasWaiting || this.#drop(id, this.#now(), note);
  }

  /** `at`: when the caller let the slot go (a release that waited for company is dated back). */
  #drop(id: string, at: number, note: boolean): boolean {
    if (!this.core.release(id, at)) return false;
    this.#hooks.dropped?.(id);
    if (note) this.#hooks.moved?.(this.#now());
    return true;
  }
}
