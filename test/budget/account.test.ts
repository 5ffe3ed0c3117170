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

  it("refuses once spend, reservations and the request's own estimate would pass the budget, and says how much of each", () => {
    const a = emptyAccount();
    for (const id of ["a", "b", "c", "d"]) expect(reserve(a, id, 0.25, 1, "total", T).ok).toBe(true);
    // 1 reserved of 1: full.
    expect(reserve(a, "e", 0.25, 1, "total", T)).toEqual({ ok: false, spend: 0, reserved: 1 });
    settle(a, "a", 0.25, "total", T);
    expect(reserve(a, "e", 0.25, 1, "total", T)).toEqual({ ok: false, spend: 0.25, reserved: 0.75 });
    settle(a, "b", 0.125, "total", T);
    // 0.375 spent + 0.5 reserved: 0.125 left, so a request that may cost 0.25 waits; one of 0.125 goes.
    expect(reserve(a, "e", 0.25, 1, "total", T)).toEqual({ ok: false, spend: 0.375, reserved: 0.5 });
    expect(reserve(a, "f", 0.125, 1, "total", T).ok).toBe(true);
  });

  it("a request that may cost more than is left is refused, however little was spent (budget $10, spent $9.99, a $5 request)", () => {
    const a = emptyAccount();
    reserve(a, "big", 9.99, 10, "total", T);
    settle(a, "big", 9.99, "total", T);
    expect(reserve(a, "five", 5, 10, "total", T)).toEqual({ ok: false, spend: 9.99, reserved: 0 });
    expect(reserve(a, "penny", 0.01, 10, "total", T).ok).toBe(true);
  });

  it("a budget reached mid-stream: overspend is bounded by what the requests in flight cost beyond their estimates", () => {
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
    // The contract's bound: at most 3 requests in flight, each 0.02 beyond its estimate.
    expect(a.spend).toBeGreaterThanOrEqual(budget - 0.02);
    expect(a.spend).toBeLessThanOrEqual(budget + 3 * (0.04 - 0.02) + 1e-9);
    expect(reserve(a, "late", 0, budget, "total", T).ok).toBe(false);
  });

  it("when no request costs more than its estimate, spend and reservations never pass the budget, at any step", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const a = emptyAccount();
    const budget = 1;
    const inFlight = new Map<string, number>();
    let admitted = 0;
    for (let step = 0; step < 2_000; step++) {
      const estimate = random() * 0.05;
      if (reserve(a, `r${step}`, estimate, budget, "total", T).ok) {
        inFlight.set(`r${step}`, estimate);
        admitted++;
      }
      if (inFlight.size > 0 && random() < 0.6) {
        const [id, est] = [...inFlight][Math.floor(random() * inFlight.size)]!;
        inFlight.delete(id);
        settle(a, id, est * random(), "total", T);
      }
      expect(a.spend + reservedUsd(a)).toBeLessThanOrEqual(budget + 1e-9);
    }
    expect(admitted).toBeGreaterThan(30);
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

  it("a new day starts at zero; a cost known only after its day ended is charged to the day it became known", () => {
    const a = emptyAccount();
    reserve(a, "late", 0.05, 1, "day", T);
    reserve(a, "a", 0.9, 1, "day", T);
    settle(a, "a", 0.9, "day", T);
    expect(reserve(a, "b", 0.1, 1, "day", T).ok).toBe(false);
    const tomorrow = Date.parse("2026-11-25T00:00:01.000Z");
    expect(reserve(a, "b", 0.1, 1, "day", tomorrow).ok).toBe(true);
    // A stream that ran past midnight: its cost is not lost between the two days.
    settle(a, "late", 0.5, "day", tomorrow);
    expect(a.spend).toBeCloseTo(0.5);
    expect(reservedUsd(a)).toBeCloseTo(0.1);
    expect(reserve(a, "c", 0.45, 1, "day", tomorrow).ok).toBe(false);
  });

  it("a reservation that expires after its day ended is charged to the day it expires in", () => {
    const a = emptyAccount();
    const lateEvening = Date.parse("2026-11-24T23:50:00.000Z");
    reserve(a, "lost", 0.3, 1, "day", lateEvening);
    reserve(a, "x", 0, 1, "day", lateEvening + RESERVATION_TTL_MS);
    expect(a.spend).toBeCloseTo(0.3);
    // A late settle corrects that charge in the same day.
    settle(a, "lost", 0.1, "day", lateEvening + RESERVATION_TTL_MS + 1);
    expect(a.spend).toBeCloseTo(0.1);
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

  it("a reservation with a TTL of its own (a provider batch's) outlives a request's", () => {
    const a = emptyAccount();
    reserve(a, "batch", 2, 10, "total", 0, 25 * 3_600_000);
    reserve(a, "x", 0, 10, "total", RESERVATION_TTL_MS + 1);
    expect(reservedUsd(a)).toBe(2);
    expect(a.spend).toBe(0);
    reserve(a, "y", 0, 10, "total", 25 * 3_600_000);
    expect(a.spend).toBe(2);
    settle(a, "batch", 1.5, "total", 25 * 3_600_000 + 1);
    expect(a.spend).toBe(1.5);
  });
});
