// Several client processes (test/e2e/client.ts, plain `node`, the openai SDK with maxRetries 0)
// share one key against a rate-limited stand-in. The gateway paces them all through one limiter:
// every request is answered 200, no 429 reaches a client, few 429s happen upstream, and a
// provider's retry-after holds back every process, not just the one that was told.
import { beforeAll, describe, expect, it } from "vitest";
import type { Attempt, StandinOptions } from "../support/standin/index.ts";
import { type ClientResult, attemptsOf, credential, runClients, useStack } from "./setup.ts";

const stack = useStack({ standin: { latencyMs: 50, retryAfter: "exact" } });

interface Shape {
  processes: number;
  requests: number; // per process
  concurrency: number; // per process
}

interface Run {
  results: ClientResult[];
  log: Attempt[];
  upstream429: number;
  elapsed: number;
}

/** One shared-key run per describe, with the stand-in's limits set to `limits`; figures are printed. */
function sharedRun(name: string, limits: Partial<StandinOptions>, shape: Shape): () => Run {
  let run: Run | undefined;
  beforeAll(async () => {
    stack.standin.configure(limits);
    const apiKey = credential(name);
    const results = (await runClients(stack, { apiKey, ...shape })).flat();
    // From the first request sent to the last answer, in any process.
    const elapsed = Math.max(...results.map((r) => r.sentAt + r.ms)) - Math.min(...results.map((r) => r.sentAt));
    const log = attemptsOf(stack.standin.stats(), apiKey);
    const upstream429 = log.filter((a) => a.status === 429).length;
    run = { results, log, upstream429, elapsed };
    const t0 = log[0]?.at ?? 0;
    console.info(`[shared-limit:${name}] ${results.length} requests from ${shape.processes} processes in ${elapsed} ms; ` +
      `upstream attempts ${log.length}, upstream 429s ${upstream429} (${((100 * upstream429) / log.length).toFixed(1)}%); ` +
      `requests retried ${results.filter((r) => (r.attempts ?? 0) > 1).length}; ` +
      `longest queue wait ${Math.max(...results.map((r) => r.queueMs ?? 0))} ms` +
      (log.length <= 20 ? `; timeline ${log.map((a) => `${a.at - t0}:${a.status}`).join(" ")}` : ""));
  });
  return () => {
    if (!run) throw new Error("the shared run did not complete");
    return run;
  };
}

/** What must hold whatever the provider's limits: everyone answered 200, through one limiter. */
function answersEveryone(get: () => Run, total: number): void {
  it("every request from every process is answered 200; no 429 reaches a client", () => {
    const { results, log } = get();
    expect(results).toHaveLength(total);
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    expect(new Set(results.map((r) => r.key)).size).toBe(1); // one key, one limiter, for all processes
    expect(log.filter((a) => a.status === 200)).toHaveLength(total);
    // The gateway's x-slotgate-attempts account for every attempt the provider saw.
    expect(results.reduce((n, r) => n + (r.attempts ?? 0), 0)).toBe(log.length);
  });
}

/** The provider's limit made the run wait at least `minMs`, and the waiting was done inside the gateway. */
function pacedBy(get: () => Run, minMs: number): void {
  it(`the provider's limit forced pacing (at least ${(minMs / 1000).toFixed(1)} s), and callers were held in the gateway`, () => {
    const { results, elapsed } = get();
    expect(elapsed).toBeGreaterThanOrEqual(minMs);
    // The stand-in answers in 50 ms: an answer that took over a second waited in the gateway
    // (its queue or its retry backoff) rather than coming back to its SDK as a 429.
    expect(Math.max(...results.map((r) => r.ms))).toBeGreaterThan(1_000);
  });
}

const PROCESSES = 4;
const CONCURRENCY = 8; // per process: up to 32 requests in flight on one key

describe("120 RPM, a bucket of a full minute (as the real providers report it)", () => {
  // 128 requests against a bucket of 120 that refills at 2/s: the last 8 wait at least 4 s.
  const shape = { processes: PROCESSES, requests: 32, concurrency: CONCURRENCY };
  const total = shape.processes * shape.requests;
  const get = sharedRun("minute-bucket", { rpm: 120, burst: 1 }, shape);
  answersEveryone(get, total);
  pacedBy(get, ((total - 120) / 2) * 1000 - 500);

  it("at most one wave of 429s where the window runs out: no more than the callers' combined concurrency", () => {
    // The limiter reads the window from every answer's headers; only requests it had already let
    // go when the window ran out can be refused, and the shared gate stops the rest. Without one
    // shared limiter each process would keep sending, and the 429s would grow with the tail.
    const { upstream429, log } = get();
    expect(upstream429, `upstream 429s: ${upstream429} of ${log.length}`).toBeLessThanOrEqual(PROCESSES * CONCURRENCY);
  });
});

describe("120 RPM enforced in short slices (a bucket of 4, refilled at 2/s)", () => {
  // 16 requests, 4 at once then 2 a second: at least 6 s.
  const shape = { processes: PROCESSES, requests: 4, concurrency: CONCURRENCY };
  const total = shape.processes * shape.requests;
  const get = sharedRun("small-burst", { rpm: 120, burst: { requests: 4 } }, shape);
  answersEveryone(get, total);
  pacedBy(get, ((total - 4) / 2) * 1000 - 500);

  it("few upstream 429s: at most 5% of attempts", () => {
    // Every answer says how much is left (remaining <= 4) and the limit per minute, and every 429
    // says when to come back: a limiter that paces by what it is told holds callers back itself.
    // 5% of ~16 attempts allows none beyond the first wave, sent before any header was seen.
    const { upstream429, log } = get();
    expect(upstream429 / log.length, `upstream 429s: ${upstream429} of ${log.length} attempts`).toBeLessThanOrEqual(0.05);
  });
});

// Without rate-limit headers: with them the limiter paces to the bucket and this run draws no 429
// at all, so there would be no gate to watch.
describe("a provider's retry-after is shared by every process (60 RPM, a bucket of one, no headers)", () => {
  const REFILL_MS = 1_000;
  /** Attempts the gateway had already let go when a 429 came back may still land this long after it. */
  const IN_FLIGHT_SLACK_MS = 300;
  /** Clock granularity between the stand-in's log and its bucket. */
  const TOLERANCE_MS = 50;
  const shape = { processes: 3, requests: 2, concurrency: 2 };
  const get = sharedRun("retry-after", { rpm: 60, burst: { requests: 1 }, headers: false }, shape);
  answersEveryone(get, shape.processes * shape.requests);

  /**
   * The retry-after the stand-in sent ("exact" mode) with a 429 at `at`: whole seconds, rounded up,
   * until its one-request bucket, emptied by the last success before, holds a request again.
   */
  function retryAfterSent(log: Attempt[], at: number): number {
    const lastSuccess = log.filter((a) => a.status === 200 && a.at <= at).at(-1);
    if (!lastSuccess) throw new Error("a 429 before any success: the bucket starts full");
    return Math.max(1, Math.ceil((lastSuccess.at + REFILL_MS - at) / 1000));
  }

  it("after a 429 with retry-after, no caller of that key in any process goes upstream before it has passed", () => {
    const { log } = get();
    const t0 = log[0]?.at ?? 0;
    const gates = log.filter((a) => a.status === 429).map((r) => ({ from: r.at, until: r.at + retryAfterSent(log, r.at) * 1000 }));
    expect(gates.length).toBeGreaterThan(0); // the run did hit the limit
    const early = gates.flatMap((g) =>
      log
        .filter((a) => a.at > g.from + IN_FLIGHT_SLACK_MS && a.at < g.until - TOLERANCE_MS)
        .map((a) => `attempt at ${a.at - t0} ms (${a.status}) inside the gate ${g.from - t0}..${g.until - t0} ms`),
    );
    expect(early).toEqual([]);
    // The gate held real callers back: requests went upstream only once the first gate had passed.
    expect(log.filter((a) => a.at >= gates[0]!.until - TOLERANCE_MS).length).toBeGreaterThan(0);
  });
});
