// The real-client matrix's harness (bench/real) on a tiny shape: real SDK client processes against
// the stand-in, what the stand-in counted, and the report's verdicts. The full matrix, through
// wrangler dev and with the promptfoo CLI, is `npm run bench -- --only real` (`--quick` to smoke it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Ctx } from "../../bench/context.ts";
import { aiSdkCaller } from "../../bench/aisdk.ts";
import { measure, type Measured } from "../../bench/real/measure.ts";
import { disagreement, rows } from "../../bench/real/report.ts";
import type { RealShape } from "../../bench/real/shapes.ts";
import type { SimResult } from "../../bench/simulated.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";

let standin: Standin;
let ctx: Ctx;

beforeAll(async () => {
  standin = await startStandin();
  // Direct runs only: the gateway is never asked for.
  ctx = { opts: { k: 1, m: 1, concurrency: 1, quick: true }, standin, gateway: null as never, passthrough: null, adminToken: "" };
});
afterAll(() => standin.close());

// About 500 tokens a request against a 1 s bucket of 1,100 (60k TPM): two of four at once pass,
// the others wait for the refill their 429's retry-after-ms names (at most three attempts each).
const tokens: RealShape = {
  name: "real-test", label: "tiny", client: "anthropic", k: 1, m: 4, c: 4, maxTokens: 500, family: "quota",
  standin: { tpm: 60_000, burst: { tokens: 1_100 }, retryAfter: "ms", latencyMs: 50 },
};

describe("real-client matrix harness", () => {
  it("runs Anthropic SDK processes against a 1 s token bucket and counts attempts, 429s and generations at the stand-in", async () => {
    const m = await measure(ctx, tokens, "direct");
    expect(m.requests).toBe(4);
    expect(m.ok).toBe(4); // the SDK's own retries (2) wait out the bucket's retry-after-ms
    expect(m.failures).toEqual({});
    expect(m.generations).toBe(4);
    expect(m.upstream429).toBeGreaterThan(0);
    expect(m.attempts).toBe(m.generations + m.upstream429);
    expect(m.makespanMs).toBeGreaterThan(0);
  });

  it("runs the openai SDK with a limit changed on schedule mid-run", async () => {
    const shape: RealShape = {
      ...tokens, client: "openai", maxTokens: 16, m: 6, c: 1,
      standin: { rpm: 6_000, burst: 1 / 60, latencyMs: 100 },
      changes: [{ atMs: 150, set: { rpm: 60, burst: { requests: 1 } } }],
    };
    const m = await measure(ctx, shape, "direct");
    expect(m.ok).toBe(6);
    // After the change the bucket holds one request a second: one caller in a row meets its 429s.
    expect(m.upstream429).toBeGreaterThan(0);
  });

  it("the AI SDK client tells the status its SDK saw, generated or streamed: 200, or a 429 as 429 with its headers (maxRetries 0)", async () => {
    const apiKey = "sk-bench-real-aisdk";
    // Two requests in the bucket, then one a second: the third and fourth are refused.
    standin.configure({ keyLimits: { [apiKey]: { rpm: 60, burst: { requests: 2 } } } });
    const ask = aiSdkCaller({ baseURL: `${standin.url}/v1`, apiKey, model: "gpt-4o-mini", maxRetries: 0, maxTokens: 16 });
    const answers = [await ask("one", false), await ask("two", true), await ask("three", false), await ask("four", true)];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 429]);
    expect(answers.map((a) => a.headers?.get("x-ratelimit-limit-requests"))).toEqual(["60", "60", "60", "60"]);
    expect(answers[2]!.headers?.get("retry-after")).toMatch(/^\d+$/);
    const seen = standin.stats().log.filter((a) => a.credential === apiKey);
    expect(seen.map((a) => [a.path, a.stream, a.status])).toEqual([["/v1/responses", false, 200], ["/v1/responses", true, 200], ["/v1/responses", false, 429], ["/v1/responses", true, 429]]);
  });

  const measured = (o: Partial<Measured>): Measured => ({
    via: "gateway", requests: 10, ok: 10, failures: {}, makespanMs: 10_000, attempts: 100, upstream429: 0, generations: 10, ...o,
  });
  const sim = (o: Partial<SimResult>): SimResult => ({ makespanMs: 10_000, idealMs: 10_000, attempts: 100, upstream429: 0, generations: 10, failed: 0, ...o });
  const figures = (gw: Partial<Measured>, s: Partial<SimResult>) => ({ shape: tokens, idealMs: 9_500, gateway: measured(gw), direct: null, sim: sim(s), simDirect: null });

  it("flags the simulator past 10% in makespan or 2 points in 429 share, not within", () => {
    expect(disagreement(figures({}, { makespanMs: 10_900, upstream429: 1 }))).toEqual([]);
    expect(disagreement(figures({}, { makespanMs: 11_200 }))).toEqual(["makespan +12%"]);
    expect(disagreement(figures({ upstream429: 5 }, { makespanMs: 8_000, upstream429: 2 }))).toEqual(["makespan -20%", "429 share -3.0 points"]);
  });

  it("holds each row to its target: a caller-visible 429 or 2% upstream 429s is a miss", () => {
    expect(rows(figures({}, {})).pass).toBe(true);
    expect(rows(figures({ upstream429: 3 }, {})).line.verdict).toBe("MISS (429s)");
    expect(rows(figures({ ok: 9, failures: { "429": 1 } }, {})).line.verdict).toBe("MISS (callers)");
    expect(rows(figures({ makespanMs: 10_500 }, {})).line.verdict).toBe("MISS (makespan)"); // 1.105x a 9.5 s ideal
  });
});
