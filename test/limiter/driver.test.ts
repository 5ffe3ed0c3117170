// The one path from calls to the core: the object, the batch runner and the simulator use it.
import { describe, expect, it } from "vitest";
import { LocalLimiter } from "../../src/cli/local-limiter";
import { DEFAULT_LIMITER } from "../../src/config/limits";
import { LimiterCore, type Outcome } from "../../src/limiter/core";
import { LimiterDriver } from "../../src/limiter/driver";
import type { AcquireResult, Op } from "../../src/limiter/types";
import type { RateLimitInfo } from "../../src/policy/types";

const cfg = { ...DEFAULT_LIMITER, startConcurrency: 2, maxConcurrency: 2 };
const NONE: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
const ok: Outcome = { cls: "success", status: 200, info: NONE, latencyMs: 10, attempt: 1, final: true };
const refusedEmpty = (next: string): Outcome => ({
  cls: "rate_limit", status: 429, latencyMs: 5, attempt: 1, final: false, next,
  info: { retryAfterMs: 100, requests: { limit: 60, remaining: 0, resetAt: null }, tokens: null },
});
const acquire = (leaseId: string, retry = false): Op => ({ t: "acquire", req: { leaseId, cost: 1, retry, waitMs: 60_000 } });

function driven(now: { t: number }, events: string[] = []) {
  const core = new LimiterCore(cfg);
  const driver = new LimiterDriver(core, () => now.t, {
    granted: (w) => events.push(`granted ${w.id}`),
    dropped: (id) => events.push(`dropped ${id}`),
    moved: () => events.push("moved"),
    settled: (id, _o, _now, apply) => (events.push(`settled ${id}`), apply()),
  });
  return { core, driver };
}

describe("LimiterDriver", () => {
  it("applies a batch in order with one pass over the queue, and tells which acquires still wait", () => {
    const now = { t: 0 };
    const { driver } = driven(now);
    driver.settle("seed", ok); // a key that has had an answer: the probe is over
    const { results } = driver.exchange([acquire("a"), acquire("b"), acquire("c")]);
    expect(results.map((r) => (typeof r === "object" && "granted" in r ? r.granted : r))).toEqual([true, true, { queued: true }]);
    // A settle that releases, then the same batch's acquire: the freed slot goes to the one already in line.
    const next = driver.exchange([{ t: "settle", id: "a", outcome: { ...ok, release: true } }, acquire("d")]);
    // A settle answers when its attempt's retry may come: a success is not retried.
    expect(next.results[0]).toEqual({ retry: "wait" });
    expect(next.results[1]).toEqual({ queued: true });
    expect(driver.core.leases.has("c")).toBe(true);
  });

  it("tells its owner what moved: grants, settles, dropped leases, and one level report per batch", () => {
    const now = { t: 0 };
    const events: string[] = [];
    const { driver } = driven(now, events);
    driver.settle("seed", ok);
    events.length = 0;
    driver.exchange([acquire("a")]);
    driver.exchange([{ t: "settle", id: "a", outcome: { ...ok, release: true } }, { t: "renew", id: "a" }]);
    expect(events).toEqual(["granted a", "moved", "settled a", "dropped a", "moved"]);
  });

  it("a cancel takes a waiter out of line (its caller hears queue_timeout) or gives a granted slot back, and drops a claim", async () => {
    const now = { t: 0 };
    const { driver, core } = driven(now);
    driver.settle("seed", ok);
    const [a, b] = [driver.acquire({ id: "a", cost: 1, retry: false, deadline: 60_000 }), driver.acquire({ id: "b", cost: 1, retry: false, deadline: 60_000 })];
    const c = driver.acquire({ id: "c", cost: 1, retry: false, deadline: 60_000 });
    expect((await a).granted && (await b).granted).toBe(true);
    expect(driver.cancel("c")).toBe(true);
    expect(await c).toMatchObject({ granted: false, reason: "queue_timeout" });
    expect(driver.cancel("a")).toBe(true);
    expect(core.leases.has("a")).toBe(false);
    driver.settle("b", { ...refusedEmpty("b:2"), release: true });
    expect(core.claims.has("b:2")).toBe(true);
    driver.cancel("b:2");
    expect(core.claims.size).toBe(0);
  });

  it("the batch runner's limiter gives the same answers as the driver for the same calls", async () => {
    const script = async (api: { acquire(id: string, retry?: boolean): Promise<AcquireResult>; settle(id: string, o: Outcome): void; cancel(id: string): void }, core: LimiterCore) => {
      const log: string[] = [];
      const go = (id: string, retry = false) => api.acquire(id, retry).then((r) => log.push(`${id}:${r.granted}`));
      const first = go("p");
      await first;
      // An answer in no time: the new key opens at once (timing.ts, opening).
      api.settle("p", { ...ok, latencyMs: 0 });
      const rest = [go("a"), go("b"), go("c")];
      await Promise.resolve();
      api.settle("a", refusedEmpty("a:2"));
      api.cancel("c");
      await Promise.all(rest);
      return { log, claims: core.claims.size, leases: [...core.leases.values()].map((l) => l.id), cooldown: core.cooldownUntil };
    };
    const t = { t: 0 };
    const { driver, core } = driven(t);
    const viaDriver = await script({
      acquire: (id, retry) => driver.acquire({ id, cost: 1, retry: retry ?? false, deadline: 60_000 }),
      settle: (id, o) => driver.settle(id, { ...o, release: true }),
      cancel: (id) => driver.cancel(id),
    }, core);
    const local = new LocalLimiter(cfg, () => t.t);
    const viaLocal = await script({
      acquire: (id, retry) => local.acquire({ leaseId: id, cost: 1, retry: retry ?? false, deadline: 60_000 }),
      settle: (id, o) => local.settle(id, o),
      cancel: (id) => local.cancel(id),
    }, local.core);
    driver.close();
    local.close();
    expect(viaLocal).toEqual(viaDriver);
    expect(viaDriver.claims).toBe(1);
  });
});
