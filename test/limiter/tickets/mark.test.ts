// What a restart holds back for tickets (src/limiter/tickets/mark.ts): the mark written before
// tickets leave, and what a new life reads from it.
import { describe, expect, it } from "vitest";
import { TICKETS_MARK_MS, TicketMark } from "../../../src/limiter/tickets/mark";
import { TICKET_LAPSE_MS, ticketsAtMost } from "../../../src/limiter/tickets/policy";

describe("TicketMark", () => {
  it("writes a mark before the first tickets leave, and not again while it covers them", () => {
    const m = new TicketMark();
    expect(m.restore(undefined, 0)).toBe(0);
    expect(m.issued(1_000, 16)).toEqual([1_000 + TICKETS_MARK_MS, ticketsAtMost(16)]);
    expect(m.issued(1_500, 16)).toBeNull();
    // Covered up to a lapse before its end; past that, a new one.
    const end = 1_000 + TICKETS_MARK_MS;
    expect(m.issued(end - TICKET_LAPSE_MS, 16)).toBeNull();
    expect(m.issued(end - TICKET_LAPSE_MS + 1, 16)).toEqual([end - TICKET_LAPSE_MS + 1 + TICKETS_MARK_MS, ticketsAtMost(16)]);
  });

  it("writes again when the most that may be out grows, keeps the most while its mark runs, and starts over once it has passed", () => {
    const m = new TicketMark();
    m.issued(1_000, 16);
    expect(m.issued(1_500, 20)).toEqual([1_500 + TICKETS_MARK_MS, ticketsAtMost(20)]);
    // A smaller limit within the mark: what was written still covers it.
    expect(m.issued(2_000, 4)).toBeNull();
    // Long after: only what the limit now allows.
    const later = 1_500 + TICKETS_MARK_MS + 10_000;
    expect(m.issued(later, 4)).toEqual([later + TICKETS_MARK_MS, ticketsAtMost(4)]);
  });

  it("holds back what the last life's mark says until its time, and carries it on", () => {
    expect(new TicketMark().restore([61_000, 8], 60_999)).toBe(8);
    expect(new TicketMark().restore([61_000, 8], 61_000)).toBe(0);
    const m = new TicketMark();
    m.restore([61_000, 8], 1_000);
    expect(m.issued(1_000, 16)).toBeNull();
    expect(m.issued(1_000, 18)).toEqual([1_000 + TICKETS_MARK_MS, 9]);
  });
});
