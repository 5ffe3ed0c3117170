// When and how many tickets a key hands out, and what an isolate asks for (src/limiter/tickets/policy.ts).
import { describe, expect, it } from "vitest";
import { askFor, fellBelow, type KeyRoom, TICKETS_PER_ISOLATE, ticketsFor } from "../../../src/limiter/tickets/policy";

const room = (o: Partial<KeyRoom> = {}): KeyRoom => ({
  queued: 0, claims: 0, gateOpen: true, opening: false, limit: 16, busy: 0, idle: 0, requests: null, tokens: null, reserved: { requests: 0, tokens: 0, output: 0 }, ...o,
});

describe("ticketsFor: when and how many", () => {
  it("gives what an isolate asks for on a key with room, up to the cap per isolate", () => {
    expect(ticketsFor(room(), { want: 3, cost: 100 })).toBe(3);
    expect(ticketsFor(room({ limit: 100 }), { want: 50, cost: 100 })).toBe(TICKETS_PER_ISOLATE);
    expect(ticketsFor(room(), { want: 0, cost: 100 })).toBe(0);
    expect(ticketsFor(room(), { want: 2.9, cost: 100 })).toBe(2);
  });

  it("gives none while anyone waits or a refused request is owed its refill, the gate is shut, or a new key is finding its limit", () => {
    const ask = { want: 4, cost: 10 };
    expect(ticketsFor(room({ queued: 1 }), ask)).toBe(0);
    expect(ticketsFor(room({ claims: 1 }), ask)).toBe(0);
    expect(ticketsFor(room({ gateOpen: false }), ask)).toBe(0);
    expect(ticketsFor(room({ opening: true }), ask)).toBe(0);
  });

  it("keeps every ticket out within its share of the slots the key's requests leave free", () => {
    const ask = { want: 8, cost: 10 };
    // 16 slots, 6 requests out: 10 free, tickets may hold 5 of them.
    expect(ticketsFor(room({ busy: 6 }), ask)).toBe(5);
    // 3 of those already out as tickets (they are in busy): 2 more.
    expect(ticketsFor(room({ busy: 9, idle: 3 }), ask)).toBe(2);
    expect(ticketsFor(room({ busy: 11, idle: 5 }), ask)).toBe(0);
    // A key at 1 slot, or all but one in use, hands out none.
    expect(ticketsFor(room({ limit: 1 }), ask)).toBe(0);
    expect(ticketsFor(room({ busy: 15 }), ask)).toBe(0);
    // Over the limit (after a cut): none, never a negative count.
    expect(ticketsFor(room({ limit: 4, busy: 9 }), ask)).toBe(0);
  });

  it("keeps every ticket out within its share of what each quota window holds", () => {
    const ask = { want: 8, cost: 100 };
    expect(ticketsFor(room({ requests: 10 }), ask)).toBe(5);
    expect(ticketsFor(room({ requests: 10, reserved: { requests: 4, tokens: 0, output: 0 } }), ask)).toBe(1);
    expect(ticketsFor(room({ requests: 1 }), ask)).toBe(0);
    // 1,000 tokens: half is 500, five tickets of 100.
    expect(ticketsFor(room({ tokens: 1_000 }), ask)).toBe(5);
    expect(ticketsFor(room({ tokens: 1_000, reserved: { requests: 3, tokens: 300, output: 0 } }), ask)).toBe(2);
    expect(ticketsFor(room({ tokens: 150 }), ask)).toBe(0);
    expect(ticketsFor(room({ tokens: -50 }), ask)).toBe(0);
    // A window of generated tokens alone (Fireworks') is charged the ask's output allowance, not its cost.
    const withOut = { want: 8, cost: 100, out: 16 };
    expect(ticketsFor(room({ tokens: 100_000, output: 64 }), withOut)).toBe(2);
    expect(ticketsFor(room({ tokens: 100_000, output: 64, reserved: { requests: 1, tokens: 100, output: 16 } }), withOut)).toBe(1);
    expect(ticketsFor(room({ tokens: 100_000, output: 20 }), withOut)).toBe(0);
    // An ask that names no output, or a key without that window, is not held back by it.
    expect(ticketsFor(room({ tokens: 100_000, output: 20 }), ask)).toBe(8);
    expect(ticketsFor(room({ tokens: 100_000 }), withOut)).toBe(8);
    // The tightest of slots and windows decides.
    expect(ticketsFor(room({ busy: 12, requests: 100, tokens: 100_000 }), ask)).toBe(2);
  });

  it("refuses a malformed ask", () => {
    expect(ticketsFor(room(), { want: Number.NaN, cost: 10 })).toBe(0);
    expect(ticketsFor(room(), { want: 4, cost: Number.NaN })).toBe(0);
    expect(ticketsFor(room(), { want: 4, cost: -1 })).toBe(0);
    expect(ticketsFor(room({ tokens: 1_000 }), { want: 4, cost: Number.POSITIVE_INFINITY })).toBe(0);
  });

  it("asks for about what the isolate sent in the last period, less what it holds, within the cap", () => {
    expect(askFor(0, 0)).toBe(0);
    expect(askFor(3, 0)).toBe(3);
    expect(askFor(3, 2)).toBe(1);
    expect(askFor(3, 5)).toBe(0);
    expect(askFor(100, 0)).toBe(TICKETS_PER_ISOLATE);
  });

  it("calls a reading below the model by a request's worth or more a fall", () => {
    expect(fellBelow(10, 9, 1)).toBe(true);
    expect(fellBelow(10, 9.5, 1)).toBe(false);
    expect(fellBelow(10, 12, 1)).toBe(false);
    expect(fellBelow(1_000, 950, 100)).toBe(false);
    expect(fellBelow(1_000, 900, 100)).toBe(true);
    expect(fellBelow(null, 0, 1)).toBe(false);
    expect(fellBelow(5, null, 1)).toBe(false);
  });
});
