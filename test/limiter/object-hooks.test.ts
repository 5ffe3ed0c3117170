// What a key's object does with its driver's decisions (src/limiter/object-hooks.ts), over a real
// core and driver: leases journalled and swept, a proof on a 2xx or a pooled member going out,
// tickets leaving their mark.
import { describe, expect, it } from "vitest";
import { LimiterDriver } from "../../src/limiter/driver";
import { objectHooks } from "../../src/limiter/object-hooks";
import { TICKETS_MARK_MS, TicketMark } from "../../src/limiter/tickets/mark";
import { ticketsAtMost } from "../../src/limiter/tickets/policy";
import { open, out } from "../support/opened-core";

const timers = { set: () => 0, clear: () => {} };

function hooked() {
  const clock = { t: 1_000 };
  const core = open();
  const log: string[] = [];
  const proven: number[] = [];
  const hooks = objectHooks({
    core,
    store: {
      keep: (l) => void log.push(`keep ${l.id} ${l.expiresAt}`),
      journal: (id, l) => void log.push(`journal ${id} ${l === null ? "gone" : "held"}`),
      idle: () => void log.push("idle"),
      saveRow: (k, v) => void log.push(`row ${k}=${v}`),
    },
    telemetry: {
      granted: (waited, now) => void log.push(`granted ${waited} ${now}`),
      timedOut: () => void log.push("timedOut"),
      settle: (_id, _o, _now, apply) => apply(),
      moved: () => {},
    },
    mark: new TicketMark(),
    now: () => clock.t,
    prove: (now) => void proven.push(now),
  });
  const driver = new LimiterDriver(core, () => clock.t, hooks, timers);
  return { core, driver, clock, log, proven };
}

describe("objectHooks", () => {
  it("journals a granted lease and arms its sweep; a release strikes it and, with nothing held, lets the sweep go", async () => {
    const { core, driver, log } = hooked();
    expect((await driver.acquire({ id: "a:1", cost: 1, retry: false, deadline: 60_000 })).granted).toBe(true);
    expect(log).toEqual([`keep a:1 ${core.lease("a:1")!.expiresAt}`, "granted 0 1000"]);
    log.length = 0;
    driver.release("a:1");
    expect(log).toEqual(["journal a:1 gone", "idle"]);
  });

  it("proves the key on a 2xx and on a pooled member that goes out, never on another answer", async () => {
    const { driver, proven, clock } = hooked();
    for (const id of ["a:1", "b:1", "c:1"]) await driver.acquire({ id, cost: 1, retry: false, deadline: 60_000 });
    driver.settle("a:1", { ...out({ status: 404, cls: "fatal" }), release: true });
    expect(proven).toEqual([]);
    clock.t = 1_100;
    driver.settle("b:1", { ...out({ status: 401, cls: "fatal", pooled: true, out: "credential" }), release: true });
    clock.t = 1_200;
    driver.settle("c:1", { ...out(), release: true });
    expect(proven).toEqual([1_100, 1_200]);
  });

  it("journals tickets as leases and writes their mark before they leave, once while it covers them", () => {
    const { core, driver, log } = hooked();
    const ids = driver.issue({ want: 2, cost: 10 });
    expect(ids).toHaveLength(2);
    const limit = core.limitAt(1_000);
    expect(log).toEqual([...ids.map((id) => `keep ${id} ${core.lease(id)!.expiresAt}`), `row tickets=${JSON.stringify([1_000 + TICKETS_MARK_MS, ticketsAtMost(limit)])}`]);
    log.length = 0;
    const more = driver.issue({ want: 1, cost: 10 });
    expect(log).toEqual(more.map((id) => `keep ${id} ${core.lease(id)!.expiresAt}`));
  });
});
