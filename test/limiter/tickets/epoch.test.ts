// The order of a key's ticket epochs, across restarts and answers that overtake each other
// (src/limiter/tickets/epoch.ts).
import { describe, expect, it } from "vitest";
import { adopts, EPOCH_SPAN, firstEpoch } from "../../../src/limiter/tickets/epoch";

describe("epochs in order", () => {
  it("a new life starts above the last life's first epoch; a key with none starts anywhere below 2^31", () => {
    expect(firstEpoch(7, 0.5)).toBe(7 + EPOCH_SPAN);
    expect(firstEpoch(null, 0.5)).toBe(2 ** 30);
    expect(firstEpoch(null, 0)).toBe(0);
    expect(firstEpoch(Number.NaN, 0.25)).toBe(2 ** 29);
    expect(firstEpoch(-3, 0.25)).toBe(2 ** 29);
  });

  it("an isolate takes an answer's epoch when its batch left after the current one came, else only a higher one", () => {
    expect(adopts(undefined, 3, false)).toBe(true);
    expect(adopts(5, 6, false)).toBe(true);
    expect(adopts(5, 4, false)).toBe(false);
    expect(adopts(5, 5, false)).toBe(false);
    // Sent after 5 was heard: the object answered it later, whatever its number (a fresh object).
    expect(adopts(5, 4, true)).toBe(true);
  });
});
