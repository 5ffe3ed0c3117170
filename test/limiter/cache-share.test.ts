// The share of a key's prompts read from the provider's prompt cache (src/limiter/cache-share.ts).
import { describe, expect, it } from "vitest";
import { CACHE_COLD_MS, charged, noShare, observe, shareOf } from "../../src/limiter/cache-share";

describe("cache share", () => {
  it("charges whole before any answer, and a prompt the answers show mostly read from the cache at the rest", () => {
    const s = noShare();
    expect(charged(s, 10_000, 0)).toBe(10_000);
    observe(s, 10_000, 9_000, 100);
    expect(shareOf(s, 100)).toBeCloseTo(0.9);
    expect(charged(s, 10_000, 200)).toBe(1_000);
  });

  it("weighs the answers by their tokens, the latest most", () => {
    const s = noShare();
    // A cache write (nothing read), then reads: the share climbs towards the reads' and never past it.
    observe(s, 8_000, 0, 0);
    const shares: number[] = [];
    for (let i = 1; i <= 12; i++) {
      observe(s, 8_000, 7_900, i);
      shares.push(shareOf(s, i));
    }
    expect(shares.every((v, i) => i === 0 || v > shares[i - 1]!)).toBe(true);
    expect(shares[0]).toBeLessThan(0.6);
    expect(shares.at(-1)).toBeGreaterThan(0.9);
    expect(shares.at(-1)).toBeLessThan(7_900 / 8_000);
    // Prompts that stop hitting the cache bring it down as fast.
    for (let i = 13; i <= 30; i++) observe(s, 8_000, 0, i);
    expect(shareOf(s, 30)).toBeLessThan(0.15);
  });

  it("forgets the share once the provider's cache would have gone cold: the next prompts are charged whole", () => {
    const s = noShare();
    observe(s, 1_000, 1_000, 0);
    expect(charged(s, 1_000, CACHE_COLD_MS)).toBe(1);
    expect(charged(s, 1_000, CACHE_COLD_MS + 1)).toBe(1_000);
    // An answer after the gap starts it again from that answer alone.
    observe(s, 1_000, 0, CACHE_COLD_MS + 10);
    expect(shareOf(s, CACHE_COLD_MS + 10)).toBe(0);
  });

  it("takes no nonsense: no prompt, reads above the prompt, costs of 0 or not numbers", () => {
    const s = noShare();
    observe(s, 0, 500, 0);
    expect(shareOf(s, 0)).toBe(0);
    observe(s, 100, 500, 1);
    expect(shareOf(s, 1)).toBe(1);
    expect(charged(s, 1_000, 1)).toBe(1);
    expect(charged(s, 0, 1)).toBe(0);
    expect(charged(s, Number.NaN, 1)).toBeNaN();
  });
});
