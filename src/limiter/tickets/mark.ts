// What a restart of a key's object holds back for tickets it had handed out (effects.ts, holdBack).
// Tickets are journalled as leases, with the next flush: one handed out just before a restart was
// never written. So before a reply carries tickets, the object writes a mark (until when tickets
// may be out, and how many at most), at most once a TICKETS_MARK_MS or when the most grows; a life
// that starts before the mark's time holds that many back until they lapse. Pure: time is passed in.
import { TICKET_LAPSE_MS, ticketsAtMost } from "./policy";

/** How far ahead a mark says tickets may be out: one write this often while a key hands them out. */
export const TICKETS_MARK_MS = 60_000;

/** Until when tickets may be out, and how many at most (the `tickets` state row, as JSON). */
export type Mark = [until: number, slots: number];

export class TicketMark {
  #mark: Mark = [0, 0];

  /** The mark the last life wrote (if any): how many slots to hold back now (0 once its time has passed). */
  restore(mark: Mark | undefined, now: number): number {
    if (mark) this.#mark = mark;
    return now < this.#mark[0] ? this.#mark[1] : 0;
  }

  /**
   * Tickets leave now from a key whose limit is `limit`: the mark to write before they do, or null
   * when the one written covers them (it runs a lapse past now, for as many).
   */
  issued(now: number, limit: number): Mark | null {
    const most = ticketsAtMost(limit);
    const [until, slots] = this.#mark;
    if (until >= now + TICKET_LAPSE_MS && slots >= most) return null;
    // A mark whose time has passed covers nothing: only what may be out now counts.
    return (this.#mark = [now + TICKETS_MARK_MS, Math.max(most, until > now ? slots : 0)]);
  }
}
