import { describe, expect, it } from "vitest";
import { Proofs } from "../../src/proxy/proofs";

const T0 = 1_000_000;

describe("Proofs", () => {
  it("a 2xx proves the pair for ttl after it; only that provider, credential and identity", () => {
    const p = new Proofs(1_000, 10);
    expect(p.proven("vertex", "h1", "proj-a", T0)).toBe(false);
    p.answered("vertex", "h1", "proj-a", 200, T0);
    expect(p.proven("vertex", "h1", "proj-a", T0 + 999)).toBe(true);
    expect(p.proven("vertex", "h1", "proj-a", T0 + 1_000)).toBe(false);
    expect(p.proven("vertex", "h2", "proj-a", T0)).toBe(false);
    expect(p.proven("vertex", "h1", "proj-b", T0)).toBe(false);
    expect(p.proven("vertex-test", "h1", "proj-a", T0)).toBe(false);
  });

  it("refusals prove nothing; a 401 or 403 takes a proof back, a 429 or 5xx leaves it", () => {
    const p = new Proofs(1_000, 10);
    for (const s of [400, 401, 403, 404, 429, 500, 529]) p.answered("vertex", "h1", "proj-a", s, T0);
    expect(p.proven("vertex", "h1", "proj-a", T0)).toBe(false);
    p.answered("vertex", "h1", "proj-a", 204, T0);
    for (const s of [429, 500, 529, 400]) p.answered("vertex", "h1", "proj-a", s, T0);
    expect(p.proven("vertex", "h1", "proj-a", T0)).toBe(true);
    p.answered("vertex", "h1", "proj-a", 403, T0);
    expect(p.proven("vertex", "h1", "proj-a", T0)).toBe(false);
    p.answered("vertex", "h1", "proj-a", 200, T0);
    p.answered("vertex", "h1", "proj-a", 401, T0);
    expect(p.proven("vertex", "h1", "proj-a", T0)).toBe(false);
  });

  it("a later 2xx extends the proof; at most max pairs, the oldest proven dropped first", () => {
    const p = new Proofs(1_000, 2);
    p.answered("vertex", "h1", "a", 200, T0);
    p.answered("vertex", "h1", "a", 200, T0 + 800);
    expect(p.proven("vertex", "h1", "a", T0 + 1_500)).toBe(true);
    p.answered("vertex", "h2", "a", 200, T0 + 900);
    p.answered("vertex", "h3", "a", 200, T0 + 900);
    expect(p.size).toBe(2);
    expect(p.proven("vertex", "h1", "a", T0 + 900)).toBe(false);
    expect(p.proven("vertex", "h3", "a", T0 + 900)).toBe(true);
  });
});
