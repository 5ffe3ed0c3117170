// The simulator's machine (sim/machine.ts): one thread, work in arrival order.
import { describe, expect, it } from "vitest";
import { Clock, EPOCH } from "../../sim/clock.ts";
import { Machine } from "../../sim/machine.ts";

describe("the simulated gateway machine", () => {
  it("runs work one piece at a time, in arrival order: a burst of arrivals waits behind itself", async () => {
    const clock = new Clock();
    const m = new Machine(clock, 10);
    const done: number[] = [];
    const job = async (units: number) => {
      await m.work(units);
      done.push(clock.now - EPOCH);
    };
    const all = Promise.all([job(1), job(1), job(0.5)]);
    clock.after(100, () => void job(1));
    await clock.run();
    await all;
    expect(done).toEqual([10, 20, 25, 110]);
  });

  it("costs nothing at 0 ms a unit", async () => {
    const clock = new Clock();
    await new Machine(clock, 0).work(5);
    expect(clock.now).toBe(EPOCH);
  });
});
