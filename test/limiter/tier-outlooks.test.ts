// A key's outlook of its tiers, kept in its object (issue 39): every isolate's attempts teach it,
// and every grant at a shed tier says so, but for one probe a PROBE_MS.
import { describe, expect, it } from "vitest";
import { LimiterCore } from "../../src/limiter/core";
import { TierOutlooks } from "../../src/limiter/tier-outlooks";
import { LimiterDriver } from "../../src/limiter/driver";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { PROBE_MS } from "../../src/tiers/fallback";

const NO_INFO = { retryAfterMs: null, requests: null, tokens: null };

describe("TierOutlooks", () => {
  it("a tier that refuses nearly everything is shed: one grant a PROBE_MS goes at it, the others hear when the next probe is", () => {
    const o = new TierOutlooks();
    expect(o.shed("flex", 0)).toBeNull();
    for (let i = 0; i < 12; i++) o.note("flex", true, 9_000);
    // Shed at 9,000: the next probe a PROBE_MS on, not at once (it just refused).
    expect(o.shed("flex", 9_500)).toEqual({ retryAfterMs: 500 });
    expect(o.shed("flex", 10_000)).toBeNull(); // the probe
    expect(o.shed("flex", 10_250)).toEqual({ retryAfterMs: PROBE_MS - 250 });
    expect(o.shed("priority", 10_250)).toBeNull(); // each tier its own
    expect(o.shed("flex", 10_000 + PROBE_MS)).toBeNull(); // the next probe
    for (let i = 0; i < 3; i++) o.note("flex", false, 11_000); // it came back
    expect(o.shed("flex", 10_000 + PROBE_MS + 1)).toBeNull();
  });
});

describe("the outlook lives with the key: what one isolate's attempts teach, another's grant says", () => {
  it("capacity refusals settled from one caller shed the tier for the next acquire from any other", async () => {
    let now = 1_000;
    const driver = new LimiterDriver(new LimiterCore(DEFAULT_LIMITER), () => now);
    const ask = async (id: string, tier?: "flex") => driver.acquire({ id, cost: 10, retry: false, deadline: now + 60_000, ...(tier && { tier }) });
    // "Isolate A" sends at flex six times, and each is refused for capacity: six in a row shed the tier.
    const words: string[] = [];
    for (let i = 0; i < 6; i++) {
      const g = await ask(`a:${i}`, "flex");
      expect(g.granted && g.shed).toBeFalsy();
      words.push(driver.settle(`a:${i}`, { cls: "capacity", status: 429, info: NO_INFO, latencyMs: 5, attempt: 1, final: false, release: true, tier: "flex" }).answer.retry);
      now += 10;
    }
    // While the key learns the tier, and once it is shed, a refused request comes back at once (its grant says where it goes).
    expect(words).toEqual(["now", "now", "now", "now", "now", "now"]);
    now += 10;
    // "Isolate B" asks at flex: the key says the tier is shed (not this grant's turn to probe), and when to come back.
    const b = await ask("b:1", "flex");
    expect(b.granted).toBe(true);
    expect(b.granted && b.shed!.retryAfterMs).toBeGreaterThan(0);
    expect(b.granted && b.shed!.retryAfterMs).toBeLessThanOrEqual(PROBE_MS);
    // A request at standard hears nothing of it; a settle at standard teaches the tier nothing.
    const std = await ask("b:2");
    expect(std.granted && std.shed).toBeUndefined();
    // Once the probe is due, a grant goes at the tier again.
    now += PROBE_MS;
    const probe = await ask("b:3", "flex");
    expect(probe.granted && probe.shed).toBeUndefined();
  });

  it("past its learning, a tier that is not shed sends a refused request back to the retry's own backoff", async () => {
    let now = 1_000;
    const driver = new LimiterDriver(new LimiterCore(DEFAULT_LIMITER), () => now);
    const settle = (id: string, cls: "capacity" | "success") =>
      driver.settle(id, { cls, status: cls === "success" ? 200 : 429, info: NO_INFO, latencyMs: 5, attempt: 1, final: false, release: true, tier: "flex" }).answer.retry;
    for (let i = 0; i < 10; i++) {
      await driver.acquire({ id: `s:${i}`, cost: 1, retry: false, deadline: now + 60_000, tier: "flex" });
      settle(`s:${i}`, i % 3 === 0 ? "capacity" : "success");
      now += 10;
    }
    await driver.acquire({ id: "r", cost: 1, retry: false, deadline: now + 60_000, tier: "flex" });
    expect(settle("r", "capacity")).toBe("wait");
  });
});
