import { describe, expect, it } from "vitest";
import { Flights, type Landing, type Wait } from "../../src/cache/flights";

describe("Flights: one leader per key, the rest wait for its landing", () => {
  it("the first leads; later joins wait and all hear the landing", async () => {
    const f = new Flights();
    const lead = f.join("k", 0, 1_000, 1_000);
    expect(lead).toHaveProperty("lead");
    const waits = [f.join("k", 1, 1_001, 1_001), f.join("k", 2, 1_002, 1_002)];
    for (const w of waits) expect(w).toMatchObject({ until: 1_000 });
    expect(f.land("k", (lead as { lead: string }).lead, "stored")).toBe(2);
    expect(await Promise.all(waits.map((w) => (w as { wait: Promise<Landing> }).wait))).toEqual(["stored", "stored"]);
    expect(f.size).toBe(0);
    expect(f.join("k", 3, 1_003, 1_003)).toHaveProperty("lead"); // landed: the next miss leads again
  });

  it("keys are independent", () => {
    const f = new Flights();
    expect(f.join("a", 0, 100, 100)).toHaveProperty("lead");
    expect(f.join("b", 0, 100, 100)).toHaveProperty("lead");
  });

  it("a leader past its time is replaced; its waiters are told it failed; its late landing changes nothing", async () => {
    const f = new Flights();
    const old = f.join("k", 0, 100, 100) as { lead: string };
    const w = f.join("k", 50, 150, 150) as { wait: Promise<Landing> };
    const next = f.join("k", 100, 200, 200);
    expect(next).toHaveProperty("lead");
    expect(await w.wait).toBe("failed");
    const w2 = f.join("k", 120, 220, 220) as { wait: Promise<Landing> };
    expect(f.land("k", old.lead, "stored")).toBe(0);
    expect(f.land("k", (next as { lead: string }).lead, "failed")).toBe(1);
    expect(await w2.wait).toBe("failed");
  });

  it("a waiter waits until the earlier of the flight's end and its own bound, and leaving forgets it", async () => {
    const f = new Flights();
    const lead = f.join("k", 0, 60_000, 1_000) as { lead: string };
    const short = f.join("k", 10, 99_000, 500) as Wait;
    const long = f.join("k", 20, 99_000, 120_000) as Wait;
    expect([short.until, long.until]).toEqual([500, 60_000]);
    expect(f.waiting).toBe(2);
    short.leave();
    expect(f.waiting).toBe(1);
    expect(f.land("k", lead.lead, "stored")).toBe(1);
    expect(await long.wait).toBe("stored");
  });
});
