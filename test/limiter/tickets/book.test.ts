// The tickets a key's object has out (src/limiter/tickets/book.ts): reservations, lapses, hold-backs.
import { describe, expect, it } from "vitest";
import { Leases } from "../../../src/limiter/leases";
import { isTicket, TicketBook } from "../../../src/limiter/tickets/book";
import { TICKET_LAPSE_MS } from "../../../src/limiter/tickets/policy";

describe("TicketBook", () => {
  it("reserves each ticket's cost until its lease is used or released, and names it apart from the Worker's lease ids", () => {
    const leases = new Leases();
    const book = new TicketBook(leases, "p");
    const a = book.issue(100, 0, 60_000, 0);
    const b = book.issue(50, 10, 60_000, 0);
    expect([a, b].every(isTicket)).toBe(true);
    expect(isTicket("3f2a9c:1")).toBe(false);
    expect(a).not.toBe(b);
    expect(book.reserved).toEqual({ requests: 2, tokens: 150, output: 0 });
    expect(leases.busy).toBe(2);
    leases.use(a, 5, 60_000);
    leases.use(a, 6, 60_000);
    expect(book.reserved).toEqual({ requests: 1, tokens: 50, output: 0 });
    expect(book.nextLapse()).toBe(10 + TICKET_LAPSE_MS);
    expect(book.due(TICKET_LAPSE_MS + 9)).toEqual([]);
    expect(book.due(TICKET_LAPSE_MS + 10)).toEqual([[b, TICKET_LAPSE_MS + 10]]);
    leases.release(b);
    expect(book.reserved).toEqual({ requests: 0, tokens: 0, output: 0 });
    expect(book.nextLapse()).toBeNull();
  });

  it("holds back slots and tokens for tickets of a last life until they lapse; a use of one takes a slot", () => {
    const book = new TicketBook(new Leases(), "p");
    book.holdBack(2, 300, 2_000);
    expect(book.reserved).toEqual({ requests: 2, tokens: 300, output: 0 });
    expect(book.nextLapse()).toBe(2_000);
    expect(book.takeUnseen(100)).toBe(true);
    expect(book.reserved).toEqual({ requests: 1, tokens: 200, output: 0 });
    expect(book.takeUnseen(50)).toBe(true); // the last takes what is left
    expect(book.reserved).toEqual({ requests: 0, tokens: 0, output: 0 });
    expect(book.takeUnseen(1)).toBe(false);
    book.holdBack(3, 30, 2_000);
    book.due(2_000);
    expect(book.unseenSlots).toBe(0);
    expect(book.nextLapse()).toBeNull();
  });

  it("gives two instances' tickets different ids", () => {
    expect(new TicketBook(new Leases(), "a").issue(1, 0, 1, 0)).not.toBe(new TicketBook(new Leases(), "b").issue(1, 0, 1, 0));
  });
});
