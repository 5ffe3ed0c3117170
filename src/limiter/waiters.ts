import type { LimiterCore } from "./core";
import type { Tier } from "../providers/dialect";
import type { Lane } from "./lanes";
import type { Waiter } from "./queue";
import type { Shed } from "./tier-outlooks";
import type { AcquireResult, MemberView } from "./types";
import type { TooLarge } from "./too-large";

export interface WaiterRequest {
  id: string;
  cost: number;
  /** Its output allowance (a window of generated tokens'). */
  out?: number;
  retry: boolean;
  /** Epoch ms on the driver's own clock. */
  deadline: number;
  caller?: string;
  lane?: Lane;
  pooled?: boolean;
  tier?: Tier;
}

type Pending = { promise: Promise<AcquireResult>; resolve: (r: AcquireResult) => void };

/** Refusals remembered per id, so a repeated acquire of an answered waiter is not queued again. */
const REFUSALS_KEPT = 1_024;

/** The timer functions Waiters uses; the simulator passes its virtual clock's. */
export interface Timers {
  set: (fn: () => void, ms: number) => unknown;
  clear: (handle: unknown) => void;
}

const realTimers: Timers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A waiter turned away: `expired` at its deadline in the queue, or `refused` on arrival. Cancels are not time-outs. */
export type OnTimeout = (how: "expired" | "refused", waitedMs: number, retryAfterMs: number) => void;

/**
 * Turns the pure core into promises: one per waiter, settled when the core grants or expires it,
 * and one timer for the next moment the core says something can change (gate or quota opening,
 * a deadline). The Durable Object and the batch runner's in-process limiter both drive the core
 * through this.
 */
export class Waiters {
  #pending = new Map<string, Pending>();
  #refusals = new Map<string, AcquireResult>();
  /** Set during `round`: every answer given meanwhile, by id. */
  #capture: Map<string, AcquireResult> | null = null;
  #timer: unknown = null;
  #timerAt = Infinity;
  #core: LimiterCore;
  #now: () => number;
  #onGrant: (w: Waiter, waitedMs: number) => void;
  #onTimeout: OnTimeout;
  #timers: Timers;

  constructor(
    core: LimiterCore,
    now: () => number,
    onGrant: (w: Waiter, waitedMs: number) => void = () => {},
    onTimeout: OnTimeout = () => {},
    timers: Timers = realTimers,
  ) {
    this.#core = core;
    this.#now = now;
    this.#onGrant = onGrant;
    this.#onTimeout = onTimeout;
    this.#timers = timers;
  }

  /**
   * Idempotent per id: a held lease answers granted, a waiting one shares its promise, and one
   * refused or timed out lately gets the same refusal again (never a second place in line).
   */
  acquire(req: WaiterRequest): Promise<AcquireResult> {
    const p = this.join(req);
    this.pump();
    return p;
  }

  /**
   * Runs `fn`, which may `join` waiters and release slots, then pumps once and returns every
   * answer given meanwhile: a batch of calls costs one pass over the queue, and the caller learns
   * which of its waiters were answered at once and which still wait.
   */
  round(fn: () => void): Map<string, AcquireResult> {
    const got = new Map<string, AcquireResult>();
    this.#capture = got;
    try {
      fn();
      this.pump();
    } finally {
      this.#capture = null;
    }
    return got;
  }

  /** `acquire` without the pump: the waiter is queued (or answered) and the caller pumps. */
  join(req: WaiterRequest): Promise<AcquireResult> {
    const now = this.#now();
    if (this.#core.lease(req.id)) return this.#answeredNow(req.id, this.#granted(req.id, 0));
    const waiting = this.#pending.get(req.id);
    if (waiting) return waiting.promise;
    const before = this.#refusals.get(req.id);
    if (before) return this.#answeredNow(req.id, before);
    const admission = this.#core.enqueue({ ...req, enqueuedAt: now }, now);
    if (admission.kind === "rejected") {
      if (admission.tooLarge) return this.#answeredNow(req.id, this.#tooLarge(req, admission.tooLarge, now));
      this.#onTimeout("refused", 0, admission.retryAfterMs);
      const r: AcquireResult = { granted: false, reason: admission.out ? "out" : "queue_timeout", retryAfterMs: admission.retryAfterMs, ...this.#core.pacing(), ...this.#viewFor(req, now) };
      this.#remember(req.id, r);
      return this.#answeredNow(req.id, r);
    }
    let resolve!: (r: AcquireResult) => void;
    const promise = new Promise<AcquireResult>((r) => (resolve = r));
    this.#pending.set(req.id, { promise, resolve });
    return promise;
  }

  /** Takes a waiter out of the line; its caller gets queue_timeout with no wait. */
  cancel(id: string): boolean {
    const w = this.#core.cancel(id);
    this.#answer(id, { granted: false, reason: "queue_timeout", retryAfterMs: 0 });
    return w !== undefined;
  }

  /** Grants whoever may go, times out whoever waited too long, and sets the timer for what is next. */
  pump(): number {
    const now = this.#now();
    const { granted, expired, ousted, tooLarge } = this.#core.pump(now);
    for (const w of ousted) this.#answer(w.id, { granted: false, reason: "out", retryAfterMs: Math.max(0, this.#core.member.until - now), ...this.#viewFor(w, now) });
    for (const [w, why] of tooLarge) this.#answer(w.id, this.#tooLarge(w, why, now));
    for (const w of granted) {
      this.#onGrant(w, now - w.enqueuedAt);
      this.#answer(w.id, { ...this.#granted(w.id, now - w.enqueuedAt), ...this.#viewFor(w, now), ...this.#shedFor(w, now) });
    }
    for (const w of expired) {
      const retryAfterMs = this.#core.retryAfter(w.cost, now, w);
      this.#onTimeout("expired", now - w.enqueuedAt, retryAfterMs);
      this.#answer(w.id, { granted: false, reason: "queue_timeout", retryAfterMs, ...this.#core.pacing(), ...this.#viewFor(w, now) });
    }
    this.#arm(this.#core.wakeAt(now), now);
    return granted.length;
  }

  /** Turns every waiter away and stops the timer (a process that wants to exit). */
  close(): void {
    if (this.#timer !== null) this.#timers.clear(this.#timer);
    this.#timer = null;
    this.#timerAt = Infinity;
    for (const w of this.#core.queue.drain()) this.#answer(w.id, { granted: false, reason: "queue_timeout", retryAfterMs: 0 });
  }

  /** A request that could never go: answered at once, never a queue time-out (too-large.ts). */
  #tooLarge(w: { pooled?: boolean; cost: number }, why: TooLarge, now: number): AcquireResult {
    return { granted: false, reason: "too_large", retryAfterMs: 0, tooLarge: why, ...this.#core.pacing(), ...this.#viewFor(w, now) };
  }

  /** A pooled request's answer carries the member's view; nobody else's pays for it. */
  #viewFor(w: { pooled?: boolean; cost: number; out?: number }, now: number): { view?: MemberView } {
    return w.pooled ? { view: this.#core.view(w.cost, now, w.out) } : {};
  }

  /** A grant asked at a tier the key's outlook has shed says so (tier-outlooks.ts): its request goes at standard, or gives the refusal back. */
  #shedFor(w: { tier?: Tier }, now: number): { shed?: Shed } {
    const shed = w.tier ? this.#core.tiers.shed(w.tier, now) : null;
    return shed ? { shed } : {};
  }

  #granted(id: string, waitedMs: number): AcquireResult {
    return { granted: true, leaseId: id, waitedMs, leaseTtlMs: this.#core.config.leaseTtlMs, ...this.#core.pacing() };
  }

  #answer(id: string, r: AcquireResult): void {
    const p = this.#pending.get(id);
    if (!p) return;
    this.#capture?.set(id, r);
    if (!r.granted) this.#remember(id, r);
    p.resolve(r);
    this.#pending.delete(id);
  }

  /** An answer given without queueing, noted for `round`. */
  #answeredNow(id: string, r: AcquireResult): Promise<AcquireResult> {
    this.#capture?.set(id, r);
    return Promise.resolve(r);
  }

  #remember(id: string, r: AcquireResult): void {
    this.#refusals.set(id, r);
    if (this.#refusals.size > REFUSALS_KEPT) this.#refusals.delete(this.#refusals.keys().next().value as string);
  }

  #arm(at: number | null, now: number): void {
    if (at === null || at >= this.#timerAt) return;
    if (this.#timer !== null) this.#timers.clear(this.#timer);
    this.#timerAt = at;
    this.#timer = this.#timers.set(() => {
      this.#timer = null;
      this.#timerAt = Infinity;
      this.pump();
    }, Math.max(0, at - now));
  }
}
