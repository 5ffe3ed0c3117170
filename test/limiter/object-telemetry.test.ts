import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import type { AcquireRequest, SettleRequest } from "../../src/limiter/types";

afterEach(() => vi.restoreAllMocks());

let n = 0;
function limiter() {
  const key = `openai:telemetry-${++n}:00000000000000aa`;
  return { key, stub: env.LIMITER.get(env.LIMITER.idFromName(key)) };
}
const req = (key: string, leaseId: string, o: Partial<AcquireRequest> = {}): AcquireRequest => ({
  key, provider: "openai", model: `telemetry-${n}`, leaseId, cost: 10, retry: false, waitMs: 5_000, ...o,
});
const outcome = (o: Partial<SettleRequest> = {}): SettleRequest => ({
  cls: "success", status: 200, info: { retryAfterMs: null, requests: { limit: 600, remaining: 550, resetAt: null }, tokens: null },
  latencyMs: 120, attempt: 1, final: true, release: true, ...o,
});

/** Event lines the object writes from now on, parsed. */
async function lines(stub: DurableObjectStub<Limiter>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  await runInDurableObject(stub, (obj: Limiter) => {
    obj.sink = (_level, line) => void out.push(JSON.parse(line));
  });
  return out;
}

/** What a run's sample points add up to: answers (a point holds its step's rate) and 429s. */
function totals(points: { answersPerSec: number; rateLimited: number }[]) {
  return {
    answers: Math.round(points.reduce((n, p) => n + p.answersPerSec * 5, 0)),
    rateLimited: points.reduce((n, p) => n + p.rateLimited, 0),
  };
}

describe("Limiter telemetry in the Durable Object", () => {
  it("counts settles and grants, and keeps counters and samples across a restart", async () => {
    const { key, stub } = limiter();
    for (let i = 0; i < 3; i++) {
      await stub.acquire(req(key, `a${i}`));
      await stub.settle(`a${i}`, outcome({ latencyMs: 100 * (i + 1) }));
    }
    await stub.acquire(req(key, "b"));
    await stub.settle("b", outcome({ cls: "rate_limit", status: 429, final: false, info: { retryAfterMs: 10, requests: null, tokens: null } }));
    const before = await stub.metrics();
    expect(before.counters.requests.success).toBe(3);
    expect(before.counters.attempts.rate_limit).toBe(1);
    expect(before.counters.retries.rate_limit).toBe(1);
    expect(before.counters.latency.count).toBe(4);
    expect(before.counters.queueWait.count).toBe(4);
    expect(before.meta).toEqual({ key, provider: "openai", model: `telemetry-${n}` });
    const samples = await stub.samples();
    expect(samples.stepMs).toBe(5_000);
    // Summed over the points: the run may cross a 5 s step's edge.
    expect(totals(samples.points)).toEqual({ answers: 3, rateLimited: 1 });
    expect(samples.points.at(-1)).toMatchObject({ rate: 10 });
    await stub.configure({}); // flushes now instead of within a second
    await evictDurableObject(stub);
    const after = await stub.metrics();
    expect(after.counters).toEqual(before.counters);
    const again = await stub.samples();
    expect(totals(again.points)).toEqual({ answers: 3, rateLimited: 1 });
    expect(again.points.length).toBeGreaterThanOrEqual(samples.points.length);
  });

  it("says limiter:restored with what it came back with", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 12 });
    await stub.acquire(req(key, "held"));
    await stub.configure({});
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void logged.push(line));
    await evictDurableObject(stub);
    await stub.state();
    const restored = logged.map((l) => JSON.parse(l)).find((l) => l.event === "limiter:restored");
    expect(restored).toMatchObject({ key, level: "info", limit: 12, phase: "steady", leases: 1, historyEntries: 1 });
  });

  it("queue time-outs: refused at once (gate shut past the deadline) or expired in the queue", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 1 });
    const out = await lines(stub);
    await stub.acquire(req(key, "a"));
    expect(await stub.acquire(req(key, "b", { waitMs: 30 }))).toMatchObject({ granted: false, reason: "queue_timeout" });
    await stub.settle("a", outcome({ cls: "rate_limit", status: 429, final: false, info: { retryAfterMs: 60_000, requests: null, tokens: null } }));
    expect(await stub.acquire(req(key, "c", { waitMs: 1_000 }))).toMatchObject({ granted: false });
    expect((await stub.metrics()).counters.gatewayErrors.queue_timeout).toBe(2);
    const timeouts = out.filter((l) => l.event === "queue:timeout");
    expect(timeouts.map((t) => t.how)).toEqual(["expired", "refused"]);
    expect(timeouts[0]!.waitedMs).toBeGreaterThanOrEqual(30);
    expect(timeouts[1]).toMatchObject({ waitedMs: 0, level: "warn" });
  });

  it("lease:expired from the alarm, counted", async () => {
    const { key, stub } = limiter();
    await stub.configure({}); // a kept key: its sweeps are stored alarms
    await stub.acquire(req(key, "orphan"));
    const out = await lines(stub);
    await runInDurableObject(stub, (obj: Limiter) => {
      const start = Date.now();
      obj.now = () => start + 61_000;
    });
    await runDurableObjectAlarm(stub);
    expect(out).toEqual([expect.objectContaining({ event: "lease:expired", leaseId: "orphan", cost: 10, inFlight: 0 })]);
    expect((await stub.metrics()).counters.leasesExpired).toBe(1);
  });

  it("reset clears counters and samples and says so", async () => {
    const { key, stub } = limiter();
    await stub.acquire(req(key, "a"));
    await stub.settle("a", outcome());
    // There was an answer to clear.
    expect((await stub.samples()).points.some((p) => p.answersPerSec > 0)).toBe(true);
    const out = await lines(stub);
    await stub.reset();
    const m = await stub.metrics();
    expect(m.counters.requests.success).toBe(0);
    expect((await stub.samples()).points.filter((p) => p.answersPerSec > 0)).toEqual([]);
    expect(out.map((l) => l.event)).toEqual(["limiter:reset"]);
  });
});
