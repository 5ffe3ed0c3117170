import { TICKET_LAPSE_MS } from "./tickets";

/** Ticket ids start with this; the Worker's lease ids never do (`<request id>:<attempt>`). */
const MARK = "~";
export const isTicket = (id: string) => id.startsWith(MARK);

/** A ticket out: what it reserves of the tokens window, and when it is counted as used. */
interface Out {
  cost: number;
  lapseAt: number;
}

/**
 * The tickets a key's object has handed out and heard nothing of since (tickets.ts): each holds
 * its slot as a lease (leases.ts) and reserves its cost in every quota window until it is used,
 * given back, or lapses. A reservation is kept apart from the windows' levels: it cannot be
 * refilled away while it waits, as a charge made early would be. Pure: time is passed in.
 */
export class TicketBook {
  /** What the tickets out hold of each window. */
  readonly reserved = { requests: 0, tokens: 0 };
  /** After a restart: slots and tokens held back for tickets of the last life this one never saw, until when. */
  private unseen = { slots: 0, tokens: 0, until: 0 };
  private out = new Map<string, Out>();
  private n = 0;
  private prefix: string;

  /** `prefix`: this instance's own, so its ids never meet a restored one. */
  constructor(prefix: string) {
    this.prefix = prefix;
  }

  get size(): number {
    return this.out.size;
  }

  /** Slots held back for tickets of the last life (they count against the limit). */
  get unseenSlots(): number {
    return this.unseen.slots;
  }

  /** A new ticket of `cost`; returns its id. */
  issue(cost: number, now: number): string {
    const id = `${MARK}${this.prefix}.${++this.n}`;
    this.hold(id, cost, now + TICKET_LAPSE_MS);
    return id;
  }

  /** A ticket out (a new one, or one restored after a restart). */
  hold(id: string, cost: number, lapseAt: number): void {
    this.take(id);
    this.out.set(id, { cost, lapseAt });
    this.reserved.requests += 1;
    this.reserved.tokens += cost;
  }

  /** Takes a ticket out of the book (used, given back or lapsed); undefined if it was not out. */
  take(id: string): Out | undefined {
    const t = this.out.get(id);
    if (!t) return undefined;
    this.out.delete(id);
    this.reserved.requests -= 1;
    this.reserved.tokens = this.out.size === 0 ? this.unseen.tokens : this.reserved.tokens - t.cost;
    return t;
  }

  /**
   * A restarted object knows the tickets its last life wrote (restored as tickets), but one handed
   * out within a flush of the restart was never written: until `until` it holds back what the
   * tickets out may have held at most (their share of the slots and of a window).
   */
  holdBack(slots: number, tokens: number, until: number): void {
    this.unseen = { slots, tokens, until };
    this.reserved.requests += slots;
    this.reserved.tokens += tokens;
  }

  /** A use of a ticket this life never saw: it takes one of the slots held back (false: none is left). */
  takeUnseen(cost: number): boolean {
    const u = this.unseen;
    if (u.slots <= 0) return false;
    const t = u.slots === 1 ? u.tokens : Math.min(cost, u.tokens);
    u.slots--;
    u.tokens -= t;
    this.reserved.requests--;
    this.reserved.tokens -= t;
    return true;
  }

  /** The tickets whose lapse has come, and when it came; a hold-back whose time has come ends. */
  due(now: number): [string, number][] {
    const u = this.unseen;
    if (u.slots > 0 && u.until <= now) {
      this.reserved.requests -= u.slots;
      this.reserved.tokens -= u.tokens;
      this.unseen = { slots: 0, tokens: 0, until: 0 };
    }
    return [...this.out].filter(([, t]) => t.lapseAt <= now).map(([id, t]) => [id, t.lapseAt]);
  }

  /** When the next ticket lapses, or null. */
  nextLapse(): number | null {
    let at: number | null = this.unseen.slots > 0 ? this.unseen.until : null;
    for (const t of this.out.values()) if (at === null || t.lapseAt < at) at = t.lapseAt;
    return at;
  }
}
