// The slots a key holds (src/limiter/leases.ts), on their own: numbering, busy, expiry.
import { describe, expect, it } from "vitest";
import { Leases } from "../../src/limiter/leases";

describe("Leases", () => {
  it("numbers grants and records the level each makes, itself included", () => {
    const l = new Leases();
    const a = l.grant("a", 10, 0, 1_000, "alice");
    const b = l.grant("b", 20, 5, 1_000);
    expect([a.seq, a.inFlight, a.grantedAt, a.expiresAt, a.caller]).toEqual([1, 1, 0, 1_000, "alice"]);
    expect([b.seq, b.inFlight]).toEqual([2, 2]);
    expect(l.seq).toBe(2);
    expect(l.size).toBe(2);
  });

  it("a complete answer leaves its slot held but not busy, once; its release makes it neither", () => {
    const l = new Leases();
    const a = l.grant("a", 1, 0, 1_000);
    l.grant("b", 1, 0, 1_000);
    l.done(a);
    l.done(a);
    expect([l.size, l.busy]).toEqual([2, 1]);
    expect(l.grant("c", 1, 0, 1_000).inFlight).toBe(2);
    expect(l.release("a")?.id).toBe("a");
    expect([l.size, l.busy]).toEqual([2, 2]);
    expect(l.release("a")).toBeUndefined();
    // A lease already gone is not marked: busy never goes below the leases held.
    l.done(a);
    expect(l.busy).toBe(2);
  });

  it("renews only what it holds; a lease held back (restored, taken back) is unnumbered", () => {
    const l = new Leases();
    l.grant("a", 1, 0, 1_000);
    expect(l.renew("a", 500, 1_000)).toBe(true);
    expect(l.get("a")?.expiresAt).toBe(1_500);
    expect(l.renew("x", 500, 1_000)).toBe(false);
    const held = l.hold("x", 7, 2_000);
    expect([held.seq, held.grantedAt, l.seq]).toEqual([undefined, undefined, 1]);
  });

  it("lists the expired without dropping them, and knows the next expiry and the oldest grant", () => {
    const l = new Leases();
    expect([l.nextExpiry(), l.oldestGrantAt()]).toEqual([null, null]);
    l.grant("a", 1, 100, 1_000);
    l.grant("b", 1, 200, 500);
    expect(l.nextExpiry()).toBe(700);
    expect(l.oldestGrantAt()).toBe(100);
    expect(l.expired(700).map((x) => x.id)).toEqual(["b"]);
    expect(l.size).toBe(2);
    l.release("a");
    expect(l.oldestGrantAt()).toBe(200);
  });
});
