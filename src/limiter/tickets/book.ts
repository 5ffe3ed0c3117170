// The tickets a key's object has out (the book; policy.ts says when and how many, effects.ts what
// they do to the key's state).
import type { Leases } from "../leases";
import { type Reserved, TICKET_LAPSE_MS } from "./policy";

/** Ticket ids start with this; the Worker's lease ids never do (`<request id>:<attempt>`). */
const MARK = "~";
export const isTicket = (id: string) => id.startsWith(MARK);
/** Tickets remembered as ended (given back, or used and released): a use said again after is not a new request. */
const ENDED_KEPT = 2_048;

/**
 * The tickets a key's object has out (policy.ts): each is a lease (leases.ts) that holds its slot
 * and reserves its cost in every quota window until it is used, given back, or lapses. A
 * reservation is kept apart from the windows' levels: it cannot be refilled away while it waits,
 * as a charge made early would be. After a restart this also holds back what tickets of the last
 * life, never written, may hold. Pure: time is passed in.
 */
export class TicketBook {
  #leases: Leases;
  #prefix: string;
  #n = 0;
  /** After a restart: slots and tokens held back for tickets of the last life this one never saw, until when. */
  #unseen = { slots: 0, tokens: 0, until: 0 };
  #ended = new Set<string>();

  /** `prefix`: this instance's own, so its ids never meet a restored one. */
  constructor(leases: Leases, prefix: string) {
    this.#leases = leases;
    this.#prefix = prefix;
  }

  /** Tickets out and not used. */
  get size(): number {
    return this.#leases.idle;
  }

  /** Slots held back for tickets of the last life (they count against the limit). */
  get unseenSlots(): number {
    return this.#unseen.slots;
  }

  /** What the tickets out hold of each window. */
  get reserved(): Reserved {
    return { requests: this.#leases.idle + this.#unseen.slots, tokens: this.#leases.idleCost + this.#unseen.tokens, output: this.#leases.idleOut };
  }

  /** A new ticket of `cost` (and `out` of output) at the key's `epoch`, its lease held until `expiresAt`; returns its id. */
  issue(cost: number, now: number, expiresAt: number, epoch: number, out?: number): string {
    const id = `${MARK}${this.#prefix}.${++this.#n}`;
    this.#leases.ticket(id, cost, expiresAt, now + TICKET_LAPSE_MS, out).epoch = epoch;
    return id;
  }

  /** A ticket's lease left (given back, or its request released). */
  end(id: string): void {
    this.#ended.add(id);
    if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.values().next().value as string);
  }

  /** Whether `id` is a ticket that came and went in this life. */
  ended(id: string): boolean {
    return this.#ended.has(id);
  }

  /**
   * A restarted object knows the tickets its last life wrote (restored as tickets), but one handed
   * out within a flush of the restart was never written: until `until` it holds back what the
   * tickets out may have held at most (their share of the slots and of a window).
   */
  holdBack(slots: number, tokens: number, until: number): void {
    this.#unseen = { slots, tokens, until };
  }

  /** A use of a ticket this life never saw: it takes one of the slots held back (false: none is left). */
  takeUnseen(cost: number): boolean {
    const u = this.#unseen;
    if (u.slots <= 0) return false;
    u.tokens -= u.slots-- === 1 ? u.tokens : Math.min(cost, u.tokens);
    return true;
  }

  /** The tickets whose lapse has come, and when it came; a hold-back whose time has come ends. */
  due(now: number): [string, number][] {
    if (this.#unseen.until <= now) this.#unseen = { slots: 0, tokens: 0, until: 0 };
    return this.#leases.lapsed(now);
  }

  /** When the next ticket lapses (or a hold-back ends), or null. */
  nextLapse(): number | null {
    const at = Math.min(this.#unseen.slots > 0 ? this.#unseen.until : Infinity, this.#leases.nextLapse());
    return at < Infinity ? at : null;
  }
}
