// LimiterCore with tickets out: slots and quota held from their issue, used, lapsed, taken back.
import { describe, expect, it } from "vitest";
import { LimiterCore } from "../../src/limiter/core";
import { available } from "../../src/limiter/quota";
import { TICKET_LAPSE_MS } from "../../src/limiter/tickets/policy";
import { cfg, NONE, open, out, reading, w } from "../support/opened-core";

describe("LimiterCore with tickets", () => {
  it("a ticket holds a slot and reserves its cost from its issue; the slot counts against the limit, not as a request out", () => {
    const core = open();
    const ids = core.issue({ want: 3, cost: 100 }, 1_000);
    expect(ids).toHaveLength(3);
    expect(core.busy).toBe(3);
    expect(core.inFlight).toBe(0);
    expect(core.tickets.reserved).toEqual({ requests: 3, tokens: 300, output: 0 });
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
    expect(core.tickets.reserved).toEqual({ requests: 0, tokens: 0, output: 0 });
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
    expect(after.tickets.reserved).toEqual({ requests: 0, tokens: 0, output: 0 });
    expect(after.useTicket("~old.4", 80, 7_100)).toBe(false);
  });

  it("a restart keeps the tickets out that its rows say were not used as tickets: an isolate may still use them; they lapse from the restart", () => {
    const before = open(reading(100, 10_000));
    const [t, u] = before.issue({ want: 2, cost: 100 }, 1_000);
    const after = new LimiterCore(cfg, before.persisted(), undefined, { epoch: 99, prefix: "u" });
    for (const id of [t!, u!]) after.restoreLease(id, 100, 5_000 + 25_000, 5_000, true);
    expect(after.busy).toBe(2);
    expect(after.tickets.reserved).toEqual({ requests: 2, tokens: 200, output: 0 });
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
