import { describe, expect, it } from "vitest";
import { LimiterCore } from "../../src/limiter/core";
import { available } from "../../src/limiter/quota";
import { Leases } from "../../src/limiter/leases";
import { isTicket, TicketBook } from "../../src/limiter/ticket-book";
import { askFor, fellBelow, type KeyRoom, TICKET_LAPSE_MS, TICKET_SHARE, TICKETS_PER_ISOLATE, ticketsFor } from "../../src/limiter/tickets";
import { cfg, NONE, open, out, reading, w } from "../support/opened-core";

const room = (o: Partial<KeyRoom> = {}): KeyRoom => ({
  queued: 0, claims: 0, gateOpen: true, opening: false, limit: 16, busy: 0, idle: 0, requests: null, tokens: null, reserved: { requests: 0, tokens: 0 }, ...o,
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
    expect(ticketsFor(room({ requests: 10, reserved: { requests: 4, tokens: 0 } }), ask)).toBe(1);
    expect(ticketsFor(room({ requests: 1 }), ask)).toBe(0);
    // 1,000 tokens: half is 500, five tickets of 100.
    expect(ticketsFor(room({ tokens: 1_000 }), ask)).toBe(5);
    expect(ticketsFor(room({ tokens: 1_000, reserved: { requests: 3, tokens: 300 } }), ask)).toBe(2);
    expect(ticketsFor(room({ tokens: 150 }), ask)).toBe(0);
    expect(ticketsFor(room({ tokens: -50 }), ask)).toBe(0);
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

describe("TicketBook", () => {
  it("reserves each ticket's cost until its lease is used or released, and names it apart from the Worker's lease ids", () => {
    const leases = new Leases();
    const book = new TicketBook(leases, "p");
    const a = book.issue(100, 0, 60_000, 0);
    const b = book.issue(50, 10, 60_000, 0);
    expect([a, b].every(isTicket)).toBe(true);
    expect(isTicket("3f2a9c:1")).toBe(false);
    expect(a).not.toBe(b);
    expect(book.reserved).toEqual({ requests: 2, tokens: 150 });
    expect(leases.busy).toBe(2);
    leases.use(a, 5, 60_000);
    leases.use(a, 6, 60_000);
    expect(book.reserved).toEqual({ requests: 1, tokens: 50 });
    expect(book.nextLapse()).toBe(10 + TICKET_LAPSE_MS);
    expect(book.due(TICKET_LAPSE_MS + 9)).toEqual([]);
    expect(book.due(TICKET_LAPSE_MS + 10)).toEqual([[b, TICKET_LAPSE_MS + 10]]);
    leases.release(b);
    expect(book.reserved).toEqual({ requests: 0, tokens: 0 });
    expect(book.nextLapse()).toBeNull();
  });

  it("holds back slots and tokens for tickets of a last life until they lapse; a use of one takes a slot", () => {
    const book = new TicketBook(new Leases(), "p");
    book.holdBack(2, 300, 2_000);
    expect(book.reserved).toEqual({ requests: 2, tokens: 300 });
    expect(book.nextLapse()).toBe(2_000);
    expect(book.takeUnseen(100)).toBe(true);
    expect(book.reserved).toEqual({ requests: 1, tokens: 200 });
    expect(book.takeUnseen(50)).toBe(true); // the last takes what is left
    expect(book.reserved).toEqual({ requests: 0, tokens: 0 });
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

describe("LimiterCore with tickets", () => {
  it("a ticket holds a slot and reserves its cost from its issue; the slot counts against the limit, not as a request out", () => {
    const core = open();
    const ids = core.issue({ want: 3, cost: 100 }, 1_000);
    expect(ids).toHaveLength(3);
    expect(core.busy).toBe(3);
    expect(core.inFlight).toBe(0);
    expect(core.tickets.reserved).toEqual({ requests: 3, tokens: 300 });
    // 16 slots, 3 held by tickets: 13 waiters go, the 14th waits.
    for (let i = 0; i < 14; i++) core.enqueue(w(`r${i}`), 1_000);
    expect(core.pump(1_000).granted).toHaveLength(13);
    expect(core.queue.size).toBe(1);
  });

  it("a used ticket is charged to the windows then (its cost, never more than reserved), numbered and dated as a grant", () => {
    const core = open(reading(100, 10_000));
    const [t] = core.issue({ want: 1, cost: 100 }, 1_000);
    const before = available(core.quota.tokens!, 1_500);
    expect(core.useTicket(t!, 60, 1_500, "alice", "high")).toBe(true);
    expect(available(core.quota.tokens!, 1_500)).toBeCloseTo(before - 60, 6);
    expect(core.tickets.reserved).toEqual({ requests: 0, tokens: 0 });
    expect(core.inFlight).toBe(1);
    expect(core.lease(t!)).toMatchObject({ grantedAt: 1_500, caller: "alice" });
    expect(core.lease(t!)!.expiresAt).toBeGreaterThanOrEqual(1_500 + cfg.leaseTtlMs);
    expect(core.callers.view(1_500, new Map()).find((c) => c.caller === "alice")).toMatchObject({ inFlight: 1, lane: "high" });
    // Its use said again (a batch sent twice) changes nothing.
    expect(core.useTicket(t!, 60, 1_600, "alice")).toBe(true);
    expect(available(core.quota.tokens!, 1_500)).toBeCloseTo(before - 60, 6);
    core.release(t!, 2_000);
    expect(core.busy).toBe(0);
  });

  it("a ticket given back unused frees its slot and its reservation, and is never charged", () => {
    const core = open(reading(100, 10_000));
    const [t] = core.issue({ want: 1, cost: 100 }, 1_000);
    const level = available(core.quota.requests!, 1_000);
    expect(core.release(t!, 1_200)).toBe(true);
    expect(core.busy).toBe(0);
    expect(core.tickets.size).toBe(0);
    expect(available(core.quota.requests!, 1_000)).toBe(level);
    // A use that arrives after (it cannot, from one isolate; a resent batch can) holds nothing again.
    expect(core.useTicket(t!, 100, 1_300)).toBe(false);
    expect(core.busy).toBe(0);
  });

  it("a ticket not heard of in TICKET_LAPSE_MS is counted as used: charged, its slot held until its lease ends", () => {
    const core = open(reading(100, 10_000));
    const [t] = core.issue({ want: 1, cost: 100 }, 1_000);
    const level = available(core.quota.tokens!, 1_000);
    core.pump(1_000 + TICKET_LAPSE_MS - 1);
    expect(core.tickets.size).toBe(1);
    core.pump(1_000 + TICKET_LAPSE_MS);
    expect(core.tickets.size).toBe(0);
    expect(core.inFlight).toBe(1);
    expect(available(core.quota.tokens!, 1_000 + TICKET_LAPSE_MS)).toBeLessThan(level);
    // Its use, come late, is not charged twice; its release frees the slot.
    const lapsed = available(core.quota.tokens!, 3_000);
    expect(core.useTicket(t!, 100, 3_000)).toBe(true);
    expect(available(core.quota.tokens!, 3_000)).toBe(lapsed);
    expect(core.release(t!, 3_100)).toBe(true);
  });

  it("an unused ticket's lease outlives its lapse by a lease's time, so one used at the last moment outlives its first renewal", () => {
    const core = open();
    const [t] = core.issue({ want: 1, cost: 1 }, 1_000);
    expect(core.lease(t!)!.expiresAt).toBe(1_000 + TICKET_LAPSE_MS + cfg.leaseTtlMs);
    expect(core.expireLeases(1_000 + TICKET_LAPSE_MS + cfg.leaseTtlMs - 1)).toEqual([]);
    expect(core.expireLeases(1_000 + TICKET_LAPSE_MS + cfg.leaseTtlMs).map((l) => l.id)).toEqual([t]);
    expect(core.busy).toBe(0);
  });

  it("a settle on a ticket whose use has not arrived uses it first (at the ticket's cost)", () => {
    const core = open(reading(100, 10_000));
    const [t] = core.issue({ want: 1, cost: 100 }, 1_000);
    const level = available(core.quota.tokens!, 1_100);
    core.settle(t!, out({ status: 200 }), 1_100);
    expect(core.tickets.size).toBe(0);
    expect(core.lease(t!)!.ticket).toBeUndefined();
    expect(available(core.quota.tokens!, 1_100)).toBeCloseTo(level - 100, 6);
    expect(core.useTicket(t!, 100, 1_200)).toBe(true); // the use, overtaken: nothing more
    expect(available(core.quota.tokens!, 1_100)).toBeCloseTo(level - 100, 6);
  });

  it("a grant waits for what the tickets out reserve: they are already granted", () => {
    // A tokens window of 1,000: tickets reserve 400 of it; a request of 700 waits for them.
    const core = open(reading(100, 1_000, { requests: 100, tokens: 1_000 }));
    const ids = core.issue({ want: 4, cost: 100 }, 100);
    expect(ids).toHaveLength(4);
    core.enqueue(w("big", { cost: 700, deadline: 600_000 }), 100);
    expect(core.pump(100).granted).toEqual([]);
    // Given back, the reservation goes and the request fits.
    for (const id of ids) core.release(id, 200);
    expect(core.pump(200).granted.map((x) => x.id)).toEqual(["big"]);
  });

  it("an estimate for a caller leaves the tickets out: a request is not refused for them", () => {
    const core = open(reading(100, 1_000, { requests: 100, tokens: 1_000 }));
    core.issue({ want: 4, cost: 100 }, 100);
    expect(core.enqueue(w("big", { cost: 900, deadline: 200 }), 100)).toEqual({ kind: "queued" });
  });

  it("hands out none while anyone waits, and takes them back when someone has to wait", () => {
    const core = open();
    core.issue({ want: 2, cost: 10 }, 1_000);
    const epoch = core.epoch;
    for (let i = 0; i < 15; i++) core.enqueue(w(`r${i}`), 1_000);
    core.pump(1_000);
    expect(core.queue.size).toBe(1);
    expect(core.epoch).not.toBe(epoch);
    expect(core.issue({ want: 2, cost: 10 }, 1_000)).toEqual([]);
  });

  it("a 429 takes every ticket back, and no more go while the gate is shut", () => {
    const core = open();
    core.enqueue(w("a"), 1_000);
    core.pump(1_000);
    core.issue({ want: 2, cost: 10 }, 1_000);
    const epoch = core.epoch;
    core.settle("a", out({ cls: "rate_limit", status: 429, info: { ...NONE, retryAfterMs: 2_000 }, final: false }), 1_100);
    expect(core.epoch).not.toBe(epoch);
    expect(core.issue({ want: 2, cost: 10 }, 1_200)).toEqual([]);
  });

  it("a reading below the model takes every ticket back; one at the model does not", () => {
    const core = open(reading(100, 10_000));
    const granted = (id: string, at: number) => {
      core.enqueue(w(id), at);
      core.pump(at);
    };
    granted("a", 1_000);
    let epoch = core.epoch;
    // The provider saw what the model predicts (100, less a's own request): no change.
    core.settle("a", out({ info: reading(99, 9_990) }), 1_050);
    expect(core.epoch).toBe(epoch);
    granted("b", 1_100);
    epoch = core.epoch;
    // Someone the key cannot see took 20 requests.
    core.settle("b", out({ info: reading(79, 9_980) }), 1_150);
    expect(core.epoch).not.toBe(epoch);
  });

  it("a new key that is still learning or opening hands out none", () => {
    const core = new LimiterCore(cfg);
    expect(core.issue({ want: 2, cost: 1 }, 0)).toEqual([]);
    core.enqueue(w("probe"), 0);
    core.pump(0);
    core.settle("probe", out({ latencyMs: 1_600 }), 1_600);
    // Its opening: half of START_CONCURRENCY at once, then a slot each 100 ms.
    expect(core.issue({ want: 2, cost: 1 }, 1_600)).toEqual([]);
    expect(core.issue({ want: 2, cost: 1 }, 1_600 + 1_600)).toHaveLength(2);
  });

  it("a restart that came while tickets may have been out holds back their share until they lapse; a use of one it never saw takes a held slot", () => {
    const before = open(reading(100, 10_000));
    const after = new LimiterCore(cfg, before.persisted(), undefined, { epoch: 99, prefix: "u" });
    after.holdBack(5_000, cfg.startConcurrency / 2);
    expect(after.busy).toBe(cfg.startConcurrency / 2);
    expect(after.tickets.reserved.requests).toBe(cfg.startConcurrency / 2);
    expect(after.tickets.reserved.tokens).toBeCloseTo(available(after.quota.tokens!, 5_000) / 2, 6);
    expect(after.useTicket("~old.3", 80, 5_100)).toBe(true);
    expect(after.lease("~old.3")).toMatchObject({ cost: 80, grantedAt: 5_100 });
    expect(after.busy).toBe(cfg.startConcurrency / 2);
    expect(after.useTicket("3f2a9c:1", 80, 5_100)).toBe(false); // not a ticket's id: nothing held
    after.pump(5_000 + TICKET_LAPSE_MS);
    expect(after.busy).toBe(1);
    expect(after.tickets.reserved).toEqual({ requests: 0, tokens: 0 });
    expect(after.useTicket("~old.4", 80, 7_100)).toBe(false);
  });

  it("a restart keeps the tickets out that its rows say were not used as tickets: an isolate may still use them; they lapse from the restart", () => {
    const before = open(reading(100, 10_000));
    const [t, u] = before.issue({ want: 2, cost: 100 }, 1_000);
    const after = new LimiterCore(cfg, before.persisted(), undefined, { epoch: 99, prefix: "u" });
    for (const id of [t!, u!]) after.restoreLease(id, 100, 5_000 + 25_000, 5_000, true);
    expect(after.busy).toBe(2);
    expect(after.tickets.reserved).toEqual({ requests: 2, tokens: 200 });
    const fresh = after.issue({ want: 1, cost: 100 }, 5_000);
    expect(fresh).toHaveLength(1);
    expect([t, u]).not.toContain(fresh[0]);
    expect(after.useTicket(t!, 100, 5_500)).toBe(true);
    expect(after.tickets.size).toBe(2); // u and the new one
    // u lapses two seconds after the restart, not after its issue (at 3,000).
    after.pump(5_000 + TICKET_LAPSE_MS - 1);
    expect(after.lease(u!)!.ticket).toBe(5_000 + TICKET_LAPSE_MS);
    after.pump(5_000 + TICKET_LAPSE_MS);
    expect(after.lease(u!)!.ticket).toBeUndefined();
  });
});
