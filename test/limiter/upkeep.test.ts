// A key's object's upkeep (src/limiter/upkeep.ts): its proof, an operator's change, its alarm (the
// sweep and the ledger's write) and when the alarm is set next, over a real core.
import { describe, expect, it } from "vitest";
import { emptyCounters } from "../../src/limiter/counters";
import type { Lease } from "../../src/limiter/state";
import { emptyRing } from "../../src/limiter/samples";
import { Upkeep } from "../../src/limiter/upkeep";
import { cfg, open, w } from "../support/opened-core";

const META = { key: "openai:k:0", provider: "openai", model: "m" };

/** An upkeep over a core past its opening, with the object's other parts recorded in order. */
function upkeep(o: { kept?: boolean; due?: number | null } = {}) {
  const clock = { t: 1_000 };
  const core = open();
  const log: string[] = [];
  const ledger = { due: o.due ?? null, seq: 4 };
  const state = { kept: o.kept ?? false };
  const u = new Upkeep({
    core,
    store: {
      prove: () => !state.kept && (state.kept = true),
      save: () => void log.push("save"),
      saveRow: (k, v) => void log.push(`row ${k}=${v}`),
      journal: (id, lease) => void log.push(`journal ${id} ${lease === null ? "gone" : "held"}`),
      fired: () => void log.push("fired"),
      arm: (at) => void log.push(`arm ${at}`),
    },
    driver: { pump: () => log.push("pump") },
    telemetry: { expired: (gone: Lease[]) => void log.push(`expired ${gone.map((l) => l.id).join(",")}`), counters: { ...emptyCounters(), calls: 3 }, ring: emptyRing() },
    listing: { report: (now) => void log.push(`report ${now}`), meta: META, lastSeen: 900 },
    ledger: {
      due: () => ledger.due,
      flush: async (now) => {
        log.push(`flush ${now}`);
        ledger.due = null;
      },
      get seq() {
        return ledger.seq;
      },
    },
    epoch: 2 ** 30,
    now: () => clock.t,
  });
  return { u, core, clock, log, ledger };
}

/** Grants lease `id` at `now` (it expires a lease's time later). */
function grant(core: ReturnType<typeof open>, id: string, now: number): void {
  core.enqueue(w(id, { enqueuedAt: now, deadline: now + 60_000 }), now);
  core.pump(now);
}

describe("Upkeep", () => {
  it("keeps a key at its first proof: listed, its epoch and state written; a later proof does nothing", () => {
    const { u, log } = upkeep();
    u.prove(1_000);
    u.prove(2_000);
    expect(log).toEqual(["report 1000", `row epoch=${2 ** 30}`, "save"]);
  });

  it("writes an operator's change at once and lets the queue move, a key kept already too", () => {
    const { u, log } = upkeep({ kept: true });
    u.operated(1_000);
    expect(log).toEqual(["save", "pump"]);
  });

  it("sweeps at its alarm the leases whose time has passed, and sets the next alarm at the earliest lease left", async () => {
    const { u, core, clock, log } = upkeep();
    grant(core, "a:1", 0);
    grant(core, "b:1", 30_000);
    clock.t = cfg.leaseTtlMs + 1;
    await u.alarm();
    expect(log).toEqual(["fired", "journal a:1 gone", "expired a:1", "pump", `arm ${core.lease("b:1")!.expiresAt}`]);
    expect(core.lease("a:1")).toBeUndefined();
  });

  it("writes the counters, then the outbox to the ledger, once it is due, and not before", async () => {
    const early = upkeep({ due: 5_000 });
    await early.u.alarm();
    expect(early.log).toEqual(["fired", "expired ", "pump", "arm 5000"]);
    const { u, log } = upkeep({ due: 1_000 });
    await u.alarm();
    expect(log).toEqual(["fired", "expired ", "pump", "save", "flush 1000"]);
  });

  it("sets no alarm when no lease is held and nothing waits to be written; the earlier of the two otherwise", () => {
    const none = upkeep();
    none.u.ensureAlarm();
    expect(none.log).toEqual([]);
    const both = upkeep({ due: 9_000 });
    grant(both.core, "a:1", 0);
    both.u.ensureAlarm();
    expect(both.log).toEqual([`arm ${Math.min(9_000, both.core.lease("a:1")!.expiresAt)}`]);
  });

  it("writes the state rows from its parts, with the ledger's seq the counters include", () => {
    const rows = new Map(upkeep().u.rows());
    expect(JSON.parse(rows.get("counters")!)).toMatchObject({ calls: 3 });
    expect(rows.get("counted")).toBe("4");
    expect(JSON.parse(rows.get("meta")!)).toEqual(META);
    expect(rows.get("lastSeen")).toBe("900");
  });
});
