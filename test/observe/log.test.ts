import { afterEach, describe, expect, it, vi } from "vitest";
import { admit, BURST, consoleSink, LEVELS, newBudget, parseLevel, PER_SECOND, shows } from "../../src/observe/log";

afterEach(() => vi.restoreAllMocks());

describe("LOG_LEVEL", () => {
  it("reads the four levels in any case, and anything else as info", () => {
    for (const l of LEVELS) {
      expect(parseLevel(l)).toBe(l);
      expect(parseLevel(` ${l.toUpperCase()} `)).toBe(l);
    }
    for (const bad of [undefined, "", "verbose", "warning", 3, null]) expect(parseLevel(bad)).toBe("info");
  });

  it("a threshold shows its own level and every more severe one", () => {
    const table = LEVELS.map((t) => LEVELS.filter((l) => shows(t, l)));
    expect(table).toEqual([["error"], ["error", "warn"], ["error", "warn", "info"], ["error", "warn", "info", "debug"]]);
  });
});

describe("log rate bound", () => {
  it("lets a burst through, then PER_SECOND, and says how many were dropped before each written line", () => {
    const b = newBudget(0);
    const burst = Array.from({ length: BURST + 10 }, () => admit(b, 0));
    expect(burst.slice(0, BURST)).toEqual(new Array(BURST).fill(0));
    expect(burst.slice(BURST)).toEqual(new Array(10).fill(null));
    expect(b.droppedTotal).toBe(10);
    // One line's worth refills after 1000 / PER_SECOND ms; the line that gets through reports the hole.
    expect(admit(b, 1_000 / PER_SECOND - 1)).toBeNull();
    expect(admit(b, 1_000 / PER_SECOND)).toBe(11);
    expect(admit(b, 1_000 / PER_SECOND)).toBeNull();
    expect(b.droppedTotal).toBe(12);
  });

  it("over a long storm writes at most BURST + PER_SECOND x seconds lines", () => {
    const b = newBudget(0);
    let written = 0;
    const seconds = 60;
    for (let t = 0; t < seconds * 1_000; t += 1) if (admit(b, t) !== null) written++; // 1,000 events a second
    expect(written).toBeLessThanOrEqual(BURST + PER_SECOND * seconds);
    expect(written).toBeGreaterThanOrEqual(BURST + PER_SECOND * seconds - 1);
    expect(b.droppedTotal).toBe(seconds * 1_000 - written);
  });

  it("never refills past BURST, and a clock that goes back refills nothing", () => {
    const b = newBudget(0);
    for (let i = 0; i < BURST; i++) admit(b, 0);
    expect(admit(b, -10_000)).toBeNull();
    const later = newBudget(0);
    for (let i = 0; i < BURST; i++) expect(admit(later, 3_600_000)).not.toBeNull();
    expect(admit(later, 3_600_000)).toBeNull();
  });
});

describe("console sink", () => {
  it("writes each level with its console method, so Workers Logs files it under that level", () => {
    const got: [string, string][] = [];
    for (const m of ["log", "warn", "error", "debug"] as const) vi.spyOn(console, m).mockImplementation((line: string) => void got.push([m, line]));
    for (const l of LEVELS) consoleSink(l, `line ${l}`);
    expect(got).toEqual([["error", "line error"], ["warn", "line warn"], ["log", "line info"], ["debug", "line debug"]]);
  });
});
