import { describe, expect, it } from "vitest";
import { isPeriod, periodStart } from "../../src/budget/period";

const at = (s: string) => Date.parse(s);

describe("budget periods (UTC)", () => {
  it("day: midnight UTC of the same day, whatever the hour", () => {
    expect(periodStart("day", at("2026-11-24T00:00:00.000Z"))).toBe(at("2026-11-24T00:00:00.000Z"));
    expect(periodStart("day", at("2026-11-24T23:59:59.999Z"))).toBe(at("2026-11-24T00:00:00.000Z"));
    expect(periodStart("day", at("2026-11-25T00:00:00.000Z"))).toBe(at("2026-11-25T00:00:00.000Z"));
  });

  it("month: the 1st, across year ends and leap days", () => {
    expect(periodStart("month", at("2026-11-30T23:59:59.999Z"))).toBe(at("2026-11-01T00:00:00.000Z"));
    expect(periodStart("month", at("2026-12-31T23:59:59.999Z"))).toBe(at("2026-12-01T00:00:00.000Z"));
    expect(periodStart("month", at("2027-01-01T00:00:00.000Z"))).toBe(at("2027-01-01T00:00:00.000Z"));
    expect(periodStart("month", at("2028-02-29T12:00:00.000Z"))).toBe(at("2028-02-01T00:00:00.000Z"));
  });

  it("total: one period from the epoch on", () => {
    expect(periodStart("total", at("2026-11-24T05:00:00.000Z"))).toBe(0);
    expect(periodStart("total", at("2099-01-01T00:00:00.000Z"))).toBe(0);
  });

  it("names", () => {
    expect(["day", "month", "total"].every(isPeriod)).toBe(true);
    for (const v of ["week", "Day", "", null, 1]) expect(isPeriod(v)).toBe(false);
  });
});
