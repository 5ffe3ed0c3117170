import { describe, expect, it } from "vitest";
import { expectedBytes, HeldBudget, heldBytes, hold, isolateHeld } from "../../src/proxy/held";

// Each test has its own budget: nothing another test (or request) holds in this isolate leaks in.
describe("the isolate's budget of held bytes", () => {
  it("takes bodies up to the budget, refuses past it, and takes again once one is let go", () => {
    const h = new HeldBudget();
    const a = h.hold(60, 100)!;
    const b = h.hold(40, 100)!;
    expect(h.hold(1, 100)).toBeNull();
    expect(h.bytes).toBe(100);
    a();
    a(); // idempotent
    expect(h.bytes).toBe(40);
    const c = h.hold(60, 100)!;
    expect(c).not.toBeNull();
    b();
    c();
    expect(h.bytes).toBe(0);
  });

  it("always takes a body alone, however large, and a request without one", () => {
    const h = new HeldBudget();
    const big = h.hold(500, 100)!;
    expect(big).not.toBeNull();
    expect(h.bytes).toBe(500);
    expect(h.hold(0, 100)).not.toBeNull();
    expect(h.hold(1, 100)).toBeNull();
    big();
    expect(h.bytes).toBe(0);
  });

  it("a growing copy takes each chunk only while it fits, never alone past the budget, and gives all back once", () => {
    const h = new HeldBudget();
    const body = h.hold(30, 100)!;
    const copy = h.growing(100);
    expect(copy.grow(50)).toBe(true);
    expect(copy.grow(30)).toBe(false); // 110 would not fit: nothing taken
    expect(h.bytes).toBe(80);
    expect(h.hold(30, 100)).toBeNull(); // the copy counts against new bodies too
    copy.release();
    copy.release();
    expect(h.bytes).toBe(30);
    expect(copy.grow(1)).toBe(false); // released: it grows no more
    body();
    expect(h.growing(100).grow(101)).toBe(false);
    expect(h.bytes).toBe(0);
  });

  it("hold and heldBytes are the isolate's budget", () => {
    const before = isolateHeld.bytes;
    const let1 = hold(7, Number.MAX_SAFE_INTEGER)!;
    expect(heldBytes()).toBe(before + 7);
    let1();
    expect(heldBytes()).toBe(before);
  });

  it("reserves the declared length, else the most a body may be", () => {
    expect(expectedBytes(new Headers({ "content-length": "1234" }), 10_000)).toBe(1234);
    expect(expectedBytes(new Headers({ "content-length": "99999" }), 10_000)).toBe(10_000);
    expect(expectedBytes(new Headers(), 10_000)).toBe(10_000);
    expect(expectedBytes(new Headers({ "content-length": "x" }), 10_000)).toBe(10_000);
  });
});
