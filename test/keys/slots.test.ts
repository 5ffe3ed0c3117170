import { describe, expect, it } from "vitest";
import { Slots } from "../../src/keys/slots";

const TTL = 60_000;

describe("a virtual key's slots across its pool", () => {
  it("grants up to the cap, then queues first come first served, and the head takes a freed slot", () => {
    const s = new Slots();
    expect(s.ask("a", 2, 1_000, 0, TTL)).toBe("granted");
    expect(s.ask("b", 2, 1_000, 0, TTL)).toBe("granted");
    expect(s.ask("c", 2, 1_000, 0, TTL)).toBe("queued");
    expect(s.ask("d", 2, 1_000, 0, TTL)).toBe("queued");
    expect(s.inFlight).toBe(2);
    s.release("b");
    expect(s.pump(2, 10, TTL)).toEqual({ granted: ["c"], timedOut: [] });
    // A newcomer does not pass the one already waiting, even with room.
    s.release("a");
    expect(s.ask("e", 2, 1_000, 20, TTL)).toBe("queued");
    expect(s.pump(2, 20, TTL).granted).toEqual(["d"]);
  });

  it("the same id asked again is the same slot or the same place (a repeated call)", () => {
    const s = new Slots();
    expect(s.ask("a", 1, 100, 0, TTL)).toBe("granted");
    expect(s.ask("a", 1, 100, 0, TTL)).toBe("granted");
    expect(s.ask("b", 1, 100, 0, TTL)).toBe("queued");
    expect(s.ask("b", 1, 100, 0, TTL)).toBe("queued");
    expect([s.inFlight, s.queued]).toEqual([1, 1]);
  });

  it("a waiter leaves at its deadline; one already past it is refused at once", () => {
    const s = new Slots();
    s.ask("a", 1, 0, 0, TTL);
    expect(s.ask("late", 1, 5, 10, TTL)).toBe("refused");
    s.ask("b", 1, 50, 10, TTL);
    expect(s.nextWake()).toBe(50);
    expect(s.pump(1, 50, TTL)).toEqual({ granted: [], timedOut: ["b"] });
    expect(s.queued).toBe(0);
  });

  it("a lease its Worker stopped renewing expires, and its slot goes to the next", () => {
    const s = new Slots();
    s.ask("dead", 1, 0, 0, TTL);
    s.ask("next", 1, 2 * TTL, 0, TTL);
    expect(s.nextWake()).toBe(TTL);
    expect(s.renew("dead", 1, TTL / 2, TTL)).toBe(true);
    expect(s.pump(1, TTL, TTL).granted).toEqual([]);
    expect(s.pump(1, TTL / 2 + TTL, TTL).granted).toEqual(["next"]);
  });

  it("after a restart, renewals take their slots back up to the cap, never past it", () => {
    const s = new Slots();
    expect(s.renew("x", 2, 0, TTL)).toBe(true);
    expect(s.renew("y", 2, 0, TTL)).toBe(true);
    expect(s.renew("z", 2, 0, TTL)).toBe(false);
    expect(s.inFlight).toBe(2);
    expect(s.ask("new", 2, 100, 0, TTL)).toBe("queued");
  });

  it("releasing a waiter takes it out of the line", () => {
    const s = new Slots();
    s.ask("a", 1, 0, 0, TTL);
    s.ask("b", 1, 100, 0, TTL);
    s.release("b");
    s.release("a");
    expect(s.pump(1, 1, TTL).granted).toEqual([]);
    expect(s.nextWake()).toBeNull();
  });
});
