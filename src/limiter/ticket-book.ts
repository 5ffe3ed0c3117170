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
    this.reserved.tokens = this.out.size === 0 ? 0 : this.reserved.tokens - t.cost;
    return t;
  }

  /** The tickets whose lapse has come, and when it came. */
  due(now: number): [string, number][] {
    return [...this.out].filter(([, t]) => t.lapseAt <= now).map(([id, t]) => [id, t.lapseAt]);
  }

  /** When the next ticket lapses, or null. */
  nextLapse(): number | null {
    let at: number | null = null;
    for (const t of this.out.values()) if (at === null || t.lapseAt < at) at = t.lapseAt;
    return at;
  }
}
