// A new key's limit before its answers set it (src/limiter/ramp.ts): learning from its first
// request, opening from its first answer, the learned limit after a refusal.
import { describe, expect, it } from "vitest";
import { Ramp } from "../../src/limiter/ramp";
import { LEARN_MS, LEARN_STEP_MS, opening } from "../../src/limiter/timing";

const MAX = 8;

describe("Ramp", () => {
  it("lets one request out while learning, then one more each step from the first request, never past the max", () => {
    const r = new Ramp();
    expect(r.limit(0, true, MAX, 4)).toBe(1);
    r.sent(1_000);
    r.sent(1_500); // a later request does not move the start
    expect(r.limit(1_000 + LEARN_MS - 1, true, MAX, 4)).toBe(1);
    expect(r.limit(1_000 + LEARN_MS, true, MAX, 4)).toBe(2);
    expect(r.limit(1_000 + LEARN_MS + 2 * LEARN_STEP_MS, true, MAX, 4)).toBe(4);
    expect(r.limit(1_000 + LEARN_MS + 100 * LEARN_STEP_MS, true, MAX, 4)).toBe(MAX);
  });

  it("says when the learning limit next rises, and nothing once it is at the max or nothing was sent", () => {
    const r = new Ramp();
    expect(r.nextStep(500, true, 1, MAX, 4)).toBeNull();
    r.sent(1_000);
    expect(r.nextStep(1_500, true, 1, MAX, 4)).toBe(1_000 + LEARN_MS);
    expect(r.nextStep(1_000 + LEARN_MS, true, 2, MAX, 4)).toBe(1_000 + LEARN_MS + LEARN_STEP_MS);
    expect(r.nextStep(1_500, true, MAX, MAX, 4)).toBeNull();
    // Not learning and never opened: the learned limit is the limit, and it does not step.
    expect(r.nextStep(1_500, false, 4, MAX, 4)).toBeNull();
    expect(r.limit(1_500, false, MAX, 4)).toBe(4);
  });

  it("opens from its first answer a step at a time up to the learned limit, and a refusal ends the opening", () => {
    const r = new Ramp();
    // Two out when the first answer came after 400 ms, starting at 4: a slot a 50 ms step (400 / 4, at most LEARN_STEP_MS).
    const o = opening(5_000, 2, 10, 400, 4);
    r.open(o);
    expect(r.limit(5_000, false, 20, 10)).toBe(3);
    expect(r.limit(5_000 + 2 * o.stepMs, false, 20, 10)).toBe(5);
    expect(r.nextStep(5_000 + 2 * o.stepMs, false, 5, 20, 10)).toBe(5_000 + 3 * o.stepMs);
    expect(r.limit(60_000, false, 20, 10)).toBe(10);
    expect(r.nextStep(60_000, false, 10, 20, 10)).toBeNull();
    r.refused();
    expect(r.limit(5_000, false, 20, 10)).toBe(10);
    expect(r.nextStep(5_000, false, 3, 20, 10)).toBeNull();
  });

  it("opens at once when the first answer cannot be placed, and learns again from the next request after a reset", () => {
    const r = new Ramp();
    r.open(null);
    expect(r.limit(0, false, 20, 10)).toBe(10);
    r.sent(1_000);
    r.open(opening(2_000, 0, 10, 400, 4));
    r.reset();
    expect(r.limit(2_000, false, 20, 10)).toBe(10);
    r.sent(9_000);
    expect(r.limit(9_000 + LEARN_MS - 1, true, MAX, 4)).toBe(1);
    expect(r.nextStep(9_500, true, 1, MAX, 4)).toBe(9_000 + LEARN_MS);
  });
});
