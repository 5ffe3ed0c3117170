// A representative subset of the policy matrix (npm run sim runs all of it). Simulated time is
// deterministic, so its ratios are asserted here; wall-clock timings never are.
import { describe, expect, it } from "vitest";
import { fairScenarios, makespanRatio, simulateFair, waitRatio } from "../../sim/fair.ts";
import { matrix } from "../../sim/matrix.ts";
import { simulate } from "../../sim/scenario.ts";
import { ratio, share429 } from "../../sim/verdict.ts";
import { local, realSpec } from "../../bench/simulated.ts";
import { SHAPES } from "../../bench/real/shapes.ts";
import type { Scenario } from "../../sim/scenario.ts";

/** A real-client shape (bench/real/shapes.ts) as the benchmark simulates it, on loopback delays; `serialMs`: the gateway's thread (sim/machine.ts). */
const real = (name: string, via: "gateway" | "direct", serialMs = 0) => {
  const s = SHAPES.find((x) => x.name === name)!;
  return simulate({ ...(local(realSpec(s, via, serialMs)) as unknown as Scenario), name, family: "quota" }, via);
};

const pick = (name: string) => {
  const sc = matrix().find((s) => s.name === name);
  if (!sc) throw new Error(`no scenario ${name}`);
  return sc;
};

describe("limiter policy in simulation", () => {
  it("quota-bound (RPM, one-second bucket, 10 s): within 10% of the ideal (the readings' dating costs a constant 0.2 s), no 429", async () => {
    const r = await simulate(pick("rpm600 second full 300ms 10s k4"), "gateway");
    expect(r.failed).toBe(0);
    expect(ratio(r)).toBeLessThanOrEqual(1.1);
    expect(share429(r)).toBe(0);
  });

  it("quota-bound with 3 s answers (the pace needs 30 in flight), 2 min: within 5%, under 1% 429s", async () => {
    const r = await simulate(pick("rpm600 minute drained 3s 2min k8"), "gateway");
    expect(ratio(r)).toBeLessThanOrEqual(1.05);
    expect(share429(r)).toBeLessThanOrEqual(0.01);
    expect(r.limit).toBeGreaterThanOrEqual(30);
  });

  it("token-bound (Anthropic headers, full minute bucket), 2 min: within 5%, no 429", async () => {
    const r = await simulate(pick("tpm anthropic minute full 1s 2min k4"), "gateway");
    expect(ratio(r)).toBeLessThanOrEqual(1.05);
    expect(share429(r)).toBe(0);
  });

  it("a concurrency cap with headers, 2 min: within 1.2x of the cap-bound ideal, under 5% 429s", async () => {
    const r = await simulate(pick("cap12 headers 300ms 2min k4"), "gateway");
    expect(r.failed).toBe(0);
    expect(ratio(r)).toBeLessThanOrEqual(1.2);
    expect(share429(r)).toBeLessThanOrEqual(0.05);
    expect(r.limit).toBe(12);
  });

  it("tickets (issue 36): on a key with room, spread over 4 isolates, most first attempts go with no call, and nothing else moves", async () => {
    const sc = { ...pick("faults 20% 500ms 10s k4"), isolates: 4 };
    const [on, off] = [await simulate(sc, "gateway"), await simulate({ ...sc, tickets: false }, "gateway")];
    expect(on.ticketed).toBeGreaterThan(0.5 * on.n);
    expect(off.ticketed).toBe(0);
    expect(on.failed).toBe(0);
    expect(on.upstream429).toBe(off.upstream429);
    expect(on.makespanMs).toBeLessThanOrEqual(off.makespanMs * 1.01);
    // A quota-bound key keeps a busy queue: no tickets, the same run to the millisecond.
    const bound = { ...pick("rpm600 second full 300ms 10s k4"), isolates: 4 };
    const [b1, b0] = [await simulate(bound, "gateway"), await simulate({ ...bound, tickets: false }, "gateway")];
    expect(b1.ticketed).toBe(0);
    expect(b1.makespanMs).toBe(b0.makespanMs);
  });

  it("20% transient faults, 2 min: every request answered, no cut, faster than the direct SDK's retries (which give up on some)", async () => {
    const sc = pick("faults 20% 500ms 2min k4");
    const [gw, direct] = [await simulate(sc, "gateway"), await simulate(sc, "direct")];
    expect(gw.failed).toBe(0);
    expect(gw.cuts).toBe(0);
    expect(gw.makespanMs / direct.makespanMs).toBeLessThanOrEqual(0.9);
  });

  it("an RPM limit halved mid-run: its 429s stop within 2 s; doubled: the new rate is used within 10 s", async () => {
    const halved = await simulate(pick("rpm1200 halved at 20s"), "gateway");
    expect(halved.last429AfterChangeMs).toBeLessThanOrEqual(2_000);
    const doubled = await simulate(pick("rpm600 doubled at 20s"), "gateway");
    expect(doubled.rateAfterChangeMs).toBeLessThanOrEqual(10_000);
  });

  const fair = (name: string) => {
    const sc = fairScenarios().find((s) => s.name === name);
    if (!sc) throw new Error(`no scenario ${name}`);
    return simulateFair(sc);
  };

  it("fair shares: 8 batch processes (low) keep a deep queue on a 1,200 RPM key; an interactive caller's wait p50 <= 2x latency, the batch job <= 1.05x (alone + the interactive share)", async () => {
    const r = await fair("fair rpm1200 batch low, interactive sends nothing");
    expect(r.failed).toBe(0);
    expect(r.measured).toBe(20);
    expect(waitRatio(r)).toBeLessThanOrEqual(2);
    expect(makespanRatio(r)).toBeLessThanOrEqual(1.05);
  });

  it("fair shares without lanes (two caller labels) and on a concurrency cap: the same targets", async () => {
    for (const name of ["fair rpm1200 two callers, one lane", "fair cap12 batch low, interactive sends nothing"]) {
      const r = await fair(name);
      expect(r.failed, name).toBe(0);
      expect(waitRatio(r), name).toBeLessThanOrEqual(2);
      expect(makespanRatio(r), name).toBeLessThanOrEqual(1.05);
    }
  });

  it("with no headers at all the key keeps today's one FIFO line: the interactive caller waits behind the whole queue", async () => {
    const r = await fair("fair rpm1200 nobody sends headers (today's one FIFO line)");
    expect(waitRatio(r)).toBeGreaterThan(3);
  });

  it("real-faults: a fault's retry takes the next free slot, not a backoff sized for its own bad luck: no slower than the direct SDK's own retries", async () => {
    const [gw, direct] = [await real("real-faults", "gateway"), await real("real-faults", "direct")];
    expect(gw.failed).toBe(0);
    expect(gw.makespanMs / direct.makespanMs).toBeLessThanOrEqual(1);
  });

  it("real-cap: the refused requests take the next free slots and the opening lets the cap refuse one request, not four: <= 2% 429s, <= 1.15x", async () => {
    for (const serialMs of [0, 10]) {
      const r = await real("real-cap", "gateway", serialMs);
      expect(r.failed).toBe(0);
      expect(share429(r), `${serialMs} ms a unit`).toBeLessThanOrEqual(0.02);
      if (serialMs === 0) expect(ratio(r)).toBeLessThanOrEqual(1.15);
    }
  });

  it("is deterministic: the same scenario gives the same figures", async () => {
    const sc = pick("cap12 no headers 300ms 10s k4");
    const [a, b] = [await simulate(sc, "gateway"), await simulate(sc, "gateway")];
    expect(b).toEqual(a);
  });
});
