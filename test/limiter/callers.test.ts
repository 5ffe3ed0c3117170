import { describe, expect, it } from "vitest";
import { CallerBook, MAX_CALLERS, OVERFLOW_CALLER, QUIET_MS } from "../../src/limiter/callers";

const nobodyWaits = () => false;

describe("CallerBook", () => {
  it("counts a caller's slots in flight, slots served and its share of the last minute's tokens", () => {
    const b = new CallerBook();
    expect(b.admit("alice", "normal", 0, nobodyWaits)).toBe("alice");
    expect(b.admit("batch", "low", 0, nobodyWaits)).toBe("batch");
    b.granted("alice", 100, 1_000);
    b.granted("batch", 300, 1_000);
    b.granted("batch", 300, 2_000);
    b.released("batch", 3_000);
    const rows = b.view(3_000, new Map([["batch", 7]]));
    expect(rows).toEqual([
      { caller: "batch", lane: "low", inFlight: 1, queued: 7, served: 2, share: 0.857, lastSeen: new Date(3_000).toISOString() },
      { caller: "alice", lane: "normal", inFlight: 1, queued: 0, served: 1, share: 0.143, lastSeen: new Date(1_000).toISOString() },
    ]);
  });

  it("the share covers the last minute only", () => {
    const b = new CallerBook();
    b.admit("old", "normal", 0, nobodyWaits);
    b.admit("new", "normal", 0, nobodyWaits);
    b.granted("old", 1_000, 0);
    b.granted("new", 10, 61_000);
    const share = (rows: { caller: string; share: number }[], c: string) => rows.find((r) => r.caller === c)?.share;
    const rows = b.view(61_000, new Map([["old", 1]]));
    expect(share(rows, "new")).toBe(1);
    expect(share(rows, "old")).toBe(0);
  });

  it("keeps the lane of a caller's latest request", () => {
    const b = new CallerBook();
    b.admit("c", "low", 0, nobodyWaits);
    b.admit("c", "high", 1, nobodyWaits);
    expect(b.view(2, new Map())[0]!.lane).toBe("high");
  });

  it("forgets a caller quiet for a minute with nothing queued or in flight, and only such a caller", () => {
    const b = new CallerBook();
    for (const c of ["quiet", "busy", "waiting"]) b.admit(c, "normal", 0, nobodyWaits);
    b.granted("busy", 1, 0);
    const waiting = (c: string) => c === "waiting";
    b.sweep(QUIET_MS - 1, waiting);
    expect(b.size).toBe(3);
    b.sweep(QUIET_MS, waiting);
    expect(b.view(QUIET_MS, new Map([["waiting", 1]])).map((r) => r.caller).sort()).toEqual(["busy", "waiting"]);
    b.released("busy", QUIET_MS);
    b.sweep(2 * QUIET_MS, nobodyWaits);
    expect(b.size).toBe(0);
  });

  it(`past ${MAX_CALLERS} active callers, new labels share the overflow caller; known ones keep their own`, () => {
    const b = new CallerBook();
    for (let i = 0; i < MAX_CALLERS; i++) expect(b.admit(`c${i}`, "normal", 0, () => true)).toBe(`c${i}`);
    expect(b.admit("one-too-many", "normal", 1, () => true)).toBe(OVERFLOW_CALLER);
    expect(b.admit("and-another", "low", 1, () => true)).toBe(OVERFLOW_CALLER);
    expect(b.admit("c7", "normal", 1, () => true)).toBe("c7");
    expect(b.size).toBe(MAX_CALLERS + 1);
    // Once the others have gone quiet, a new label has room of its own again.
    expect(b.admit("later", "normal", QUIET_MS + 1, nobodyWaits)).toBe("later");
    expect(b.size).toBeLessThanOrEqual(2);
  });

  it("a flood of distinct labels cannot grow the book past the cap", () => {
    const b = new CallerBook();
    for (let i = 0; i < 10_000; i++) b.admit(`flood-${i}`, "normal", i, () => true);
    expect(b.size).toBe(MAX_CALLERS + 1);
  });
});
