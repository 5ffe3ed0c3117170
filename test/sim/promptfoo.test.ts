// The simulator's models for the real-client matrix: promptfoo's client (sim/promptfoo.ts) and
// ideals that follow a limit changed mid-run or an absolute burst.
import { describe, expect, it } from "vitest";
import { idealMs, simulate } from "../../sim/scenario.ts";

const fleet = { k: 4, c: 16, n: 120, maxTokens: 16, promptChars: 46 };
const rpm300 = { flavour: "openai" as const, rpm: 300, burst: 1 / 60, latencyMs: 300, netMs: 1 };

describe("promptfoo's client model", () => {
  it("throws away a 200 whose x-ratelimit-remaining-requests is 0 and sends it again: more generations than tests", async () => {
    const r = await simulate({ name: "pf", family: "quota", shape: rpm300, fleet, client: "promptfoo" }, "direct");
    expect(r.failed).toBe(0);
    expect(r.generations).toBeGreaterThan(fleet.n);
  });

  it("without quota headers every test is generated once", async () => {
    const r = await simulate({ name: "pf", family: "quota", shape: { ...rpm300, headers: false }, fleet, client: "promptfoo" }, "direct");
    expect(r.failed).toBe(0);
    expect(r.generations).toBe(fleet.n);
  });
});

describe("ideal makespan", () => {
  it("follows a limit changed mid-run: 1,800 -> 600 -> 1,800 RPM", () => {
    const shape = { flavour: "openai" as const, rpm: 1_800, burst: 1 / 60, latencyMs: 300, netMs: 0, changes: [{ atMs: 4_000, set: { rpm: 600 } }, { atMs: 10_000, set: { rpm: 1_800 } }] };
    // 30 in the bucket; 120 by 4 s, 60 more by 10 s, then the last 110 at 30/s; plus one answer.
    expect(idealMs(shape, { k: 8, c: 16, n: 320, maxTokens: 16, promptChars: 46 })).toBeCloseTo(10_000 + (110 / 30) * 1_000 + 300, 0);
  });

  it("starts from an absolute token burst: 6,667 tokens of a 400k TPM bucket", () => {
    const shape = { flavour: "anthropic" as const, tpm: 400_000, burst: { tokens: 6_667 }, latencyMs: 400, netMs: 0 };
    const perRequest = Math.ceil(46 / 4) + 4_000;
    expect(idealMs(shape, { k: 4, c: 8, n: 64, maxTokens: 4_000, promptChars: 46 })).toBeCloseTo(((64 * perRequest - 6_667) / 400_000) * 60_000 + 400, 0);
  });
});
