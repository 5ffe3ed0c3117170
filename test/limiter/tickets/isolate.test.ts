// One isolate's tickets (src/limiter/tickets/isolate.ts) against answers that overtake each other.
import { describe, expect, it } from "vitest";
import type { Tickets } from "../../../src/limiter/types";
import { HeldTickets } from "../../../src/limiter/tickets/isolate";

const grant = (ids: string[], cost = 100, out?: number): Tickets => ({ ids, cost, ...(out !== undefined && { out }), leaseTtlMs: 60_000, limit: 16 });

describe("HeldTickets: answers that overtake each other", () => {
  it("a late answer never brings back an older epoch: its tickets (taken back by the 429 between) go back at once", () => {
    const h = new HeldTickets();
    // Two batches leave before either answer comes: the one answered first by the object (epoch 4,
    // with tickets) arrives last, after the one answered after a 429 (epoch 5).
    const early = h.mark;
    const late = h.mark;
    expect(h.heard({ epoch: 5 }, 1_000, late)).toEqual([]);
    expect(h.heard({ epoch: 4, tickets: grant(["~a", "~b"]) }, 1_000, early)).toEqual(["~a", "~b"]);
    expect(h.take(10, 1_010)).toBeNull();
    // A batch sent after epoch 5 was heard brings epoch 6 with tickets: they are used.
    const next = h.mark;
    expect(h.heard({ epoch: 6, tickets: grant(["~c"]) }, 1_020, next)).toEqual([]);
    expect(h.take(10, 1_030)?.id).toBe("~c");
  });

  it("two answers that crossed: the higher epoch wins whichever comes first, and the lower one's tickets go back", () => {
    const h = new HeldTickets();
    const [a, b] = [h.mark, h.mark];
    expect(h.heard({ epoch: 8, tickets: grant(["~x"]) }, 0, a)).toEqual([]);
    expect(h.heard({ epoch: 9, tickets: grant(["~y"]) }, 0, b)).toEqual(["~x"]);
    expect(h.take(10, 10)?.id).toBe("~y");
    expect(h.take(10, 10)).toBeNull();
  });

  it("an answer to a batch sent after the current epoch came is taken whatever its number: an object that lost its storage starts again low", () => {
    const h = new HeldTickets();
    h.heard({ epoch: 2 ** 40 }, 0);
    const after = h.mark;
    expect(h.heard({ epoch: 3, tickets: grant(["~z"]) }, 5, after)).toEqual([]);
    expect(h.take(10, 6)?.id).toBe("~z");
  });
});

describe("HeldTickets: a key that limits generated tokens apart", () => {
  it("a ticket goes only to a request whose output allowance it reserved; asks name the most a recent request allowed", () => {
    const h = new HeldTickets();
    h.heard({ epoch: 1, tickets: grant(["~a", "~b"], 100, 16) }, 0);
    expect(h.take(50, 10, 32)).toBeNull();
    expect(h.take(50, 10, 16)?.id).toBe("~a");
    // A ticket the object reserved no output for (an object that reads no such window) takes any.
    h.heard({ epoch: 1, tickets: grant(["~c"], 100) }, 20);
    expect(h.take(50, 30, 500)?.id).toBe("~c");
    expect(h.ask(40)).toMatchObject({ cost: 50, out: 500 });
  });
});
