import type { Lane } from "./lanes";

/** Past this many callers on one key, new labels share the overflow caller: a flood of labels cannot grow the object. */
export const MAX_CALLERS = 256;
/** The caller of every waiter that names none: whoever sends nothing new shares this one line. */
export const DEFAULT_CALLER = "(default)";
/** Neither is a valid label (the Worker allows no parentheses), so no caller can name them. */
export const OVERFLOW_CALLER = "(overflow)";
/** Longer than any label or token hash the Worker sends: the object does not trust its callers blindly. */
const MAX_NAME = 200;
/** A caller with nothing queued or in flight for this long is forgotten. */
export const QUIET_MS = 60_000;
/** How often quiet callers are looked for when the cap is not what asks. */
const SWEEP_MS = 10_000;
const STEP_MS = 5_000;
/** One minute of STEP_MS buckets: "share of the last minute". */
const STEPS = 12;

interface Entry {
  lane: Lane;
  inFlight: number;
  served: number;
  lastSeen: number;
  /** Tokens granted per STEP_MS bucket over the last minute, a ring indexed by step number. */
  ring: number[];
  step: number;
}

/** One row of the admin JSON's `callers`: labels and token hashes only, never a token. */
export interface CallerView {
  caller: string;
  /** The lane of its latest request. */
  lane: Lane;
  inFlight: number;
  queued: number;
  /** Slots granted to it (retries included) since it was last forgotten. */
  served: number;
  /** Its part of the tokens granted on this key in the last minute, 0 to 1. */
  share: number;
  lastSeen: string;
}

/**
 * Who has been asking of one key, for the admin view and the cap: per caller its slots in flight,
 * slots served and tokens granted over the last minute. Pure: time comes in as an argument.
 * Leases restored after a restart name no caller and are counted by nobody.
 */
export class CallerBook {
  #book = new Map<string, Entry>();
  #sweptAt = -Infinity;

  get size(): number {
    return this.#book.size;
  }

  /**
   * The caller a new waiter is filed under: its own label (none: the default caller), or the
   * overflow caller once MAX_CALLERS others are active. `waiting` says whether a caller has
   * anything queued (the queue knows).
   */
  admit(label: string | undefined, lane: Lane, now: number, waiting: (caller: string) => boolean): string {
    if (now - this.#sweptAt >= SWEEP_MS) this.sweep(now, waiting);
    let name = typeof label === "string" && label.length > 0 && label.length <= MAX_NAME ? label : DEFAULT_CALLER;
    if (!this.#book.has(name) && this.#named() >= MAX_CALLERS) {
      this.sweep(now, waiting);
      if (this.#named() >= MAX_CALLERS) name = OVERFLOW_CALLER;
    }
    const e = this.#entry(name, lane, now);
    e.lane = lane;
    e.lastSeen = now;
    return name;
  }

  granted(caller: string, cost: number, now: number): void {
    const e = this.#book.get(caller);
    if (!e) return;
    e.inFlight++;
    e.served++;
    e.lastSeen = now;
    this.#roll(e, now);
    e.ring[e.step % STEPS]! += Number.isFinite(cost) && cost > 0 ? cost : 1;
  }

  released(caller: string, now: number): void {
    const e = this.#book.get(caller);
    if (!e) return;
    e.inFlight = Math.max(0, e.inFlight - 1);
    e.lastSeen = now;
  }

  /** Forgets callers with nothing queued or in flight whose last request is QUIET_MS old. */
  sweep(now: number, waiting: (caller: string) => boolean): void {
    this.#sweptAt = now;
    for (const [caller, e] of this.#book) if (e.inFlight === 0 && now - e.lastSeen >= QUIET_MS && !waiting(caller)) this.#book.delete(caller);
  }

  /** Every caller, busiest share first. */
  view(now: number, queued: Map<string, number>): CallerView[] {
    this.sweep(now, (c) => (queued.get(c) ?? 0) > 0);
    const tokens = new Map<string, number>();
    let total = 0;
    for (const [caller, e] of this.#book) {
      this.#roll(e, now);
      const t = e.ring.reduce((a, b) => a + b, 0);
      tokens.set(caller, t);
      total += t;
    }
    const rows = [...this.#book].map(([caller, e]) => ({
      caller,
      lane: e.lane,
      inFlight: e.inFlight,
      queued: queued.get(caller) ?? 0,
      served: e.served,
      share: total > 0 ? Math.round((1_000 * tokens.get(caller)!) / total) / 1_000 : 0,
      lastSeen: new Date(e.lastSeen).toISOString(),
    }));
    return rows.sort((a, b) => b.share - a.share || b.queued - a.queued || a.caller.localeCompare(b.caller));
  }

  #named(): number {
    return this.#book.size - (this.#book.has(OVERFLOW_CALLER) ? 1 : 0);
  }

  #entry(name: string, lane: Lane, now: number): Entry {
    let e = this.#book.get(name);
    if (!e) this.#book.set(name, (e = { lane, inFlight: 0, served: 0, lastSeen: now, ring: new Array<number>(STEPS).fill(0), step: Math.floor(now / STEP_MS) }));
    return e;
  }

  /** Moves the ring on to `now`'s bucket, emptying the buckets it passes. */
  #roll(e: Entry, now: number): void {
    const step = Math.floor(now / STEP_MS);
    if (step <= e.step) return;
    if (step - e.step >= STEPS) e.ring.fill(0);
    else for (let s = e.step + 1; s <= step; s++) e.ring[s % STEPS] = 0;
    e.step = step;
  }
}
