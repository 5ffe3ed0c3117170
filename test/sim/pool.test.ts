// Pools in simulation: the real router, retry loop and limiters on the virtual clock, one provider
// account per member. Simulated time is deterministic, so the ratios and shares are asserted here;
// the same rows run end to end through wrangler dev in `npm run bench -- --only pools`.
import { describe, expect, it } from "vitest";
import { simulatePool } from "../../sim/pool.ts";

const shape = { flavour: "openai" as const, latencyMs: 300, burst: 1 / 60 };
const fleet = (n: number) => ({ k: 4, c: 16, n, maxTokens: 16, promptChars: 200 });
const share = (served: Record<string, number>, name: string) => served[name]! / Object.values(served).reduce((a, b) => a + b, 0);

describe("a pool in simulation", () => {
  it("two members of 600 RPM run at the pooled 1,200 RPM: within 10% of its ideal, no 429, half each (4 isolates, each with its own view)", async () => {
    const r = await simulatePool({ members: [{ name: "a", rpm: 600 }, { name: "b", rpm: 600 }], shape, fleet: fleet(1_200), isolates: 4 });
    expect(r.failed).toBe(0);
    expect(r.makespanMs / r.idealMs).toBeLessThanOrEqual(1.1);
    expect(r.upstream429 / r.attempts).toBeLessThanOrEqual(0.02);
    expect(Math.abs(share(r.served, "a") - 0.5)).toBeLessThanOrEqual(0.1);
  });

  it("members of 900 and 300 RPM serve in proportion to their limits", async () => {
    const r = await simulatePool({ members: [{ name: "big", rpm: 900 }, { name: "small", rpm: 300 }], shape, fleet: fleet(1_200), isolates: 4 });
    expect(r.failed).toBe(0);
    expect(Math.abs(share(r.served, "big") - 0.75)).toBeLessThanOrEqual(0.1);
    expect(r.makespanMs / r.idealMs).toBeLessThanOrEqual(1.1);
  });

  it("a member with no quota: every request answered by the others, the bad one tried at most 5 times in 2 minutes", async () => {
    const r = await simulatePool({
      members: [{ name: "a", rpm: 600 }, { name: "b", rpm: 600 }, { name: "broke", rpm: 600, exhausted: true }],
      shape, fleet: fleet(2_400), isolates: 4,
    });
    expect(r.failed).toBe(0);
    expect(r.makespanMs).toBeGreaterThanOrEqual(110_000);
    expect(r.tried.broke).toBeGreaterThanOrEqual(2);
    expect(r.tried.broke).toBeLessThanOrEqual(5);
    expect(r.makespanMs / r.idealMs).toBeLessThanOrEqual(1.1);
  });
});
