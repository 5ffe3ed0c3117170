import { describe, expect, it } from "vitest";
import { emptyAccount, RESERVATION_TTL_MS, reserve, reservedUsd, settle } from "../../src/budget/account";

const T = Date.parse("2026-11-24T10:00:00.000Z");

describe("a budget's reservations and settlements", () => {
  it("reserves at admission, settles with the true cost", () => {
    const a = emptyAccount();
    expect(reserve(a, "r1", 0.1, 1, "total", T)).toEqual({ ok: true });
    expect(reservedUsd(a)).toBeCloseTo(0.1);
    settle(a, "r1", 0.03, "total", T + 1);
    expect(a.spend).toBeCloseTo(0.03);
    expect(reservedUsd(a)).toBe(0);
  });

  it("refuses once spend and reservations reach the budget, and says how much of each", () => {
    const a = emptyAccount();
    for (const id of ["a", "b", "c"]) expect(reserve(a, id, 0.25, 1, "total", T).ok).toBe(true);
    expect(reserve(a, "d", 0.25, 1, "total", T).ok).toBe(true); // 0.75 < 1: still room
    expect(reserve(a, "e", 0.25, 1, "total", T)).toEqual({ ok: false, spend: 0, reserved: 1 });
    settle(a, "a", 0.25, "total", T);
    // 0.25 spent + 0.75 reserved = 1: full.
    expect(reserve(a, "e", 0.25, 1, "total", T)).toEqual({ ok: false, spend: 0.25, reserved: 0.75 });
    settle(a, "b", 0.125, "total", T);
    expect(reserve(a, "e", 0.25, 1, "total", T).ok).toBe(true);
  });

  it("a budget reached mid-stream: overspend is bounded by the requests in flight when it ran out", () => {
    const a = emptyAccount();
    const budget = 0.5;
    // Estimates too low by half: every true cost is twice its reservation.
    const inFlight: string[] = [];
    let n = 0;
    let refused = 0;
    for (let step = 0; step < 200; step++) {
      const id = `r${n++}`;
      if (reserve(a, id, 0.02, budget, "total", T).ok) inFlight.push(id);
      else refused++;
      // Streams end in admission order, two steps behind.
      if (inFlight.length > 2) settle(a, inFlight.shift()!, 0.04, "total", T);
    }
    for (const id of inFlight) settle(a, id, 0.04, "total", T);
    expect(refused).toBeGreaterThan(150);
    // At most the in-flight window (3 requests of 0.04) beyond the budget.
    expect(a.spend).toBeGreaterThanOrEqual(budget);
    expect(a.spend).toBeLessThanOrEqual(budget + 3 * 0.04 + 1e-9);
    expect(reserve(a, "late", 0, budget, "total", T).ok).toBe(false);
  });

  it("settle and reserve are idempotent per id", () => {
    const a = emptyAccount();
    reserve(a, "x", 0.2, 1, "total", T);
    reserve(a, "x", 0.2, 1, "total", T);
    expect(reservedUsd(a)).toBeCloseTo(0.2);
    settle(a, "x", 0.05, "total", T);
    settle(a, "x", 0.05, "total", T);
    settle(a, "never-reserved", 9, "total", T);
    expect(a.spend).toBeCloseTo(0.05);
  });

  it("a new day starts at zero; a cost settled after its day ended is not charged to the next", () => {
    const a = emptyAccount();
    reserve(a, "late", 0.2, 1, "day", T);
    reserve(a, "a", 0.9, 1, "day", T);
    settle(a, "a", 0.9, "day", T);
    expect(reserve(a, "b", 0.1, 1, "day", T).ok).toBe(false);
    const tomorrow = Date.parse("2026-11-25T00:00:01.000Z");
    expect(reserve(a, "b", 0.1, 1, "day", tomorrow).ok).toBe(true);
    settle(a, "late", 0.5, "day", tomorrow);
    expect(a.spend).toBe(0);
    expect(reservedUsd(a)).toBeCloseTo(0.1);
  });

  it("month and total periods", () => {
    const a = emptyAccount();
    reserve(a, "a", 0, 1, "month", T);
    settle(a, "a", 0.7, "month", T);
    expect(reserve(a, "b", 0, 1, "month", Date.parse("2026-11-30T23:00:00.000Z")).ok).toBe(true);
    settle(a, "b", 0.3, "month", Date.parse("2026-11-30T23:00:00.000Z"));
    expect(reserve(a, "c", 0, 1, "month", Date.parse("2026-11-30T23:30:00.000Z")).ok).toBe(false);
    expect(reserve(a, "c", 0, 1, "month", Date.parse("2026-12-01T00:00:00.000Z")).ok).toBe(true);
    const t = emptyAccount();
    reserve(t, "a", 0, 1, "total", T);
    settle(t, "a", 1, "total", T);
    expect(reserve(t, "b", 0, 1, "total", Date.parse("2030-01-01T00:00:00.000Z")).ok).toBe(false);
  });

  it("a reservation never settled is charged at its estimate after the TTL; a late settle corrects it", () => {
    const a = emptyAccount();
    reserve(a, "lost", 0.4, 1, "total", T);
    reserve(a, "x", 0, 1, "total", T + RESERVATION_TTL_MS);
    expect(a.spend).toBeCloseTo(0.4);
    expect(reservedUsd(a)).toBe(0);
    settle(a, "lost", 0.1, "total", T + RESERVATION_TTL_MS + 1);
    expect(a.spend).toBeCloseTo(0.1);
    settle(a, "lost", 0.1, "total", T + RESERVATION_TTL_MS + 2);
    expect(a.spend).toBeCloseTo(0.1);
  });

  it("negative figures count as zero", () => {
    const a = emptyAccount();
    reserve(a, "n", -5, 1, "total", T);
    expect(reservedUsd(a)).toBe(0);
    settle(a, "n", -1, "total", T);
    expect(a.spend).toBe(0);
  });
});
