import { describe, expect, it } from "vitest";
import { DEFAULT_WEIGHTS, isLane, parseWeights, weightsOrDefault } from "../../src/limiter/lanes";

describe("priority lanes", () => {
  it("PRIORITY_WEIGHTS is high:normal:low, default 8:4:1", () => {
    expect(parseWeights(undefined)).toEqual(DEFAULT_WEIGHTS);
    expect(parseWeights("")).toEqual({ high: 8, normal: 4, low: 1 });
    expect(parseWeights("16:4:1")).toEqual({ high: 16, normal: 4, low: 1 });
    expect(parseWeights(" 3 : 2 : 0.5 ")).toEqual({ high: 3, normal: 2, low: 0.5 });
  });

  it.each(["8:4", "8:4:1:1", "8:4:0", "8:-4:1", "a:b:c", "8,4,1", "1e3:1:1", "1001:1:1", "Infinity:1:1"])("refuses %j with the reason", (raw) => {
    expect(parseWeights(raw)).toMatch(/^PRIORITY_WEIGHTS must be three positive numbers/);
    expect(weightsOrDefault(raw)).toEqual(DEFAULT_WEIGHTS);
  });

  it("knows its lanes", () => {
    expect(["high", "normal", "low"].every(isLane)).toBe(true);
    expect([undefined, "HIGH", "urgent", 1].some(isLane)).toBe(false);
  });
});
