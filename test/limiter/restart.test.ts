// What one life of a key's object leaves the next (src/limiter/restart.ts): the state rows written
// and read back, and the leases restored, each cut to one renewal interval.
import { describe, expect, it } from "vitest";
import { LimiterCore, renewEvery } from "../../src/limiter/core";
import { emptyCounters } from "../../src/limiter/counters";
import { lastLife, RESTORE_MARGIN_MS, restoreLeases, stateRows } from "../../src/limiter/restart";
import { emptyRing } from "../../src/limiter/samples";
import { cfg } from "../support/opened-core";

const META = { key: "openai:k:0", provider: "openai", model: "m" };

describe("the state rows", () => {
  it("reads back what a save wrote", () => {
    const core = new LimiterCore(cfg);
    core.configure({ limit: 3 }, 0, () => null);
    const counters = { ...emptyCounters(), calls: 7 };
    const rows = new Map(stateRows({ core: core.persisted(), counters, samples: emptyRing(), counted: 12, meta: META, lastSeen: 5_000 }));
    expect([...rows.keys()]).toEqual(["core", "counters", "samples", "counted", "meta", "lastSeen"]);
    rows.set("epoch", "1073741824");
    rows.set("tickets", JSON.stringify([61_000, 8]));
    const last = lastLife(rows);
    expect(last.core).toEqual(JSON.parse(JSON.stringify(core.persisted())));
    expect(new LimiterCore(cfg, last.core).aimd.limit).toBe(3);
    expect(last).toMatchObject({ meta: META, lastSeen: 5_000, epoch: 2 ** 30, counted: 12, tickets: [61_000, 8], counters: { calls: 7 } });
  });

  it("writes no meta or lastSeen the key has not got, and reads a key never kept as nothing", () => {
    const rows = stateRows({ core: new LimiterCore(cfg).persisted(), counters: emptyCounters(), samples: emptyRing(), counted: 0, meta: null, lastSeen: null });
    expect(rows.map(([k]) => k)).toEqual(["core", "counters", "samples", "counted"]);
    expect(lastLife(new Map())).toEqual({ core: undefined, meta: null, lastSeen: null, epoch: null, counters: undefined, samples: undefined, counted: undefined, tickets: undefined });
  });
});

describe("restoreLeases", () => {
  it("gives a restored lease until its holder's next renewal would have come, a ticket not used back as a ticket", () => {
    const core = new LimiterCore(cfg, undefined, undefined, { epoch: 0, prefix: "n" });
    const grace = renewEvery(cfg.leaseTtlMs) + RESTORE_MARGIN_MS;
    restoreLeases(core, [
      { id: "a:1", cost: 10, expires: 1_000 + 10 * grace, unused: null },
      { id: "b:1", cost: 20, expires: 1_500, unused: null },
      { id: "~x.1", cost: 30, expires: 1_000 + 10 * grace, unused: true },
      { id: "~x.2", cost: 40, expires: 1_000 + 10 * grace, unused: false },
      { id: "~x.3", cost: 50, expires: 1_000 + 10 * grace, unused: null },
    ], 1_000);
    expect(core.lease("a:1")!.expiresAt).toBe(1_000 + grace);
    expect(core.lease("b:1")!.expiresAt).toBe(1_500);
    // A ticket whose row says it was not used (or a row written before the column) is a ticket again; a used one a request out.
    expect(core.lease("~x.1")!.ticket).toBeDefined();
    expect(core.lease("~x.2")!.ticket).toBeUndefined();
    expect(core.lease("~x.3")!.ticket).toBeDefined();
    expect(core.inFlight).toBe(3);
    expect(core.busy).toBe(5);
  });
});
