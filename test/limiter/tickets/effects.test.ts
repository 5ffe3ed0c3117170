// What tickets do to a key's state across a restart and against what isolates say late or twice
// (src/limiter/tickets/effects.ts, through LimiterCore): counted once, freed within the restore grace,
// checked against the epoch.
import { describe, expect, it } from "vitest";
import { LimiterCore, renewEvery } from "../../../src/limiter/core";
import { available } from "../../../src/limiter/quota";
import { TICKET_LAPSE_MS } from "../../../src/limiter/tickets/policy";
import { cfg, open, reading } from "../../support/opened-core";

/** The restore grace the object gives a restored lease: one renewal interval and 5 s. */
const GRACE = renewEvery(cfg.leaseTtlMs) + 5_000;

/** A new life of `before`'s key at `now`, with `rows` restored as the object restores them. */
function restart(before: LimiterCore, now: number, rows: { id: string; unused: boolean }[]): LimiterCore {
  const after = new LimiterCore(cfg, JSON.parse(JSON.stringify(before.persisted())), undefined, { epoch: before.epoch + 2 ** 30, prefix: "n" });
  for (const r of rows) {
    const l = before.lease(r.id)!;
    after.restoreLease(r.id, l.cost, Math.min(l.expiresAt, now + GRACE), now, r.unused);
  }
  return after;
}

describe("tickets across a restart", () => {
  it("a ticket its row says was used is a request out again: never lapsed or charged a second time, freed at the restore grace unless renewed", () => {
    const before = open(reading(100, 10_000));
    const [t] = before.issue({ want: 1, cost: 100 }, 1_000);
    before.useTicket(t!, 80, 1_100);
    const charged = before.quota.granted.requests;
    const after = restart(before, 5_000, [{ id: t!, unused: false }]);
    expect(after.quota.granted.requests).toBe(charged);
    expect([after.inFlight, after.tickets.size]).toEqual([1, 0]);
    after.pump(5_000 + TICKET_LAPSE_MS + 1);
    expect(after.quota.granted.requests).toBe(charged);
    // Its use said again (a batch resent after the restart) charges nothing either.
    expect(after.useTicket(t!, 80, 5_100)).toBe(true);
    expect(after.quota.granted.requests).toBe(charged);
    expect(after.expireLeases(5_000 + GRACE - 1)).toEqual([]);
    expect(after.expireLeases(5_000 + GRACE).map((l) => l.id)).toEqual([t]);
    expect(after.busy).toBe(0);
  });

  it("a restored ticket nobody uses lapses once (one charge) and is freed within the restore grace, not a lease's time after its lapse", () => {
    const before = open(reading(100, 10_000));
    const [t] = before.issue({ want: 1, cost: 100 }, 1_000);
    const after = restart(before, 5_000, [{ id: t!, unused: true }]);
    const charged = after.quota.granted.requests;
    after.pump(5_000 + TICKET_LAPSE_MS);
    expect(after.quota.granted.requests).toBe(charged + 1);
    expect(after.lease(t!)!.expiresAt).toBe(5_000 + GRACE);
    expect(after.expireLeases(5_000 + GRACE).map((l) => l.id)).toEqual([t]);
    expect(after.busy).toBe(0);
  });

  it("a restored ticket an isolate uses lives a lease's time from its use, and its Worker renews it", () => {
    const before = open(reading(100, 10_000));
    const [t] = before.issue({ want: 1, cost: 100 }, 1_000);
    const after = restart(before, 5_000, [{ id: t!, unused: true }]);
    expect(after.useTicket(t!, 90, 5_500)).toBe(true);
    expect(after.lease(t!)!.expiresAt).toBe(5_500 + cfg.leaseTtlMs);
  });
});

describe("what an isolate says of a ticket, checked", () => {
  it("a use of a ticket issued before the epoch moved is answered false, and charged once, as a grant made at its use", () => {
    const core = open(reading(100, 10_000));
    const [t, u] = core.issue({ want: 2, cost: 100 }, 1_000);
    core.retake();
    const charged = core.quota.granted.requests;
    const level = available(core.quota.tokens!, 1_200);
    expect(core.useTicket(t!, 60, 1_200)).toBe(false);
    expect(core.quota.granted.requests).toBe(charged + 1);
    expect(available(core.quota.tokens!, 1_200)).toBeCloseTo(level - 60, 6);
    expect(core.lease(t!)).toMatchObject({ grantedAt: 1_200, ticket: undefined });
    expect(core.useTicket(t!, 60, 1_300)).toBe(true); // said again: nothing more
    expect(core.quota.granted.requests).toBe(charged + 1);
    // One of the key's current epoch is answered true.
    const [v] = core.issue({ want: 1, cost: 100 }, 1_400);
    expect(core.useTicket(v!, 60, 1_400)).toBe(true);
    core.release(u!, 1_500);
  });

  it("a use said again after its ticket ended changes nothing; a use of one this life never held is a request out, held and charged", () => {
    const core = open(reading(100, 10_000));
    const [t] = core.issue({ want: 1, cost: 100 }, 1_000);
    core.useTicket(t!, 50, 1_100);
    core.release(t!, 1_200);
    const charged = core.quota.granted.requests;
    expect(core.useTicket(t!, 50, 1_300)).toBe(false);
    expect([core.busy, core.quota.granted.requests]).toEqual([0, charged]);
    // Given back unused, then a use (a batch resent out of order): nothing either.
    const [g] = core.issue({ want: 1, cost: 100 }, 1_400);
    core.release(g!, 1_500);
    expect(core.useTicket(g!, 50, 1_600)).toBe(false);
    expect([core.busy, core.quota.granted.requests]).toEqual([0, charged]);
    // A ticket of a life whose rows were lost, with nothing held back: its request is out.
    expect(core.useTicket("~lost.3", 70, 1_700)).toBe(false);
    expect([core.inFlight, core.quota.granted.requests]).toEqual([1, charged + 1]);
    expect(core.lease("~lost.3")).toMatchObject({ cost: 70, grantedAt: 1_700, expiresAt: 1_700 + cfg.leaseTtlMs });
    // Not a ticket's id: nothing.
    expect(core.useTicket("3f2a9c:1", 70, 1_800)).toBe(false);
    expect(core.inFlight).toBe(1);
  });

  it("the tickets used or lapsed since the last look are listed once, for their rows to say so", () => {
    const core = open(reading(100, 10_000));
    const [a, b, c] = core.issue({ want: 3, cost: 10 }, 1_000);
    core.useTicket(a!, 10, 1_100);
    core.settle(b!, { cls: "success", status: 200, info: reading(99, 9_000), latencyMs: 5, attempt: 1, final: false }, 1_200);
    core.release(b!, 1_300);
    expect(core.leases.takeUsed().map((l) => l.id)).toEqual([a]);
    expect(core.leases.takeUsed()).toEqual([]);
    core.pump(1_000 + TICKET_LAPSE_MS);
    expect(core.leases.takeUsed().map((l) => l.id)).toEqual([c]);
  });
});
