// A Worker's calls at its key's object (src/limiter/calls.ts): counted, the key listed, an answer's
// usage kept, what changed written (at once or with the next flush), tickets only for a kept key.
import { describe, expect, it } from "vitest";
import { Calls } from "../../src/limiter/calls";
import { DEFAULT_CALLER } from "../../src/limiter/callers";
import { LimiterDriver } from "../../src/limiter/driver";
import type { KeyMeta, Op, SettleRequest } from "../../src/limiter/types";
import type { StatedQuota } from "../../src/providers/quota";
import type { Tokens } from "../../src/usage/tokens";
import type { UsageRecord } from "../../src/usage/types";
import { cfg, NONE, open, out } from "../support/opened-core";

const META: KeyMeta = { key: "openai:k:0", provider: "openai", model: "m" };
const acquire = (leaseId: string): Op => ({ t: "acquire", req: { leaseId, cost: 10, retry: false, waitMs: 60_000 } });
const usage = (input: number, cached = 0): UsageRecord => ({ model: "m", tokens: { input, output: 0, cached, cacheWrite: 0 }, costUsd: null });
const timers = { set: () => 0, clear: () => {} };

/** Calls over a real core (past its opening) and driver, with the object's other parts recorded. */
function calls(o: { kept?: boolean; stated?: StatedQuota; cacheReadsFree?: boolean; drawn?: (t: Tokens) => number } = {}) {
  const clock = { t: 1_000 };
  const core = open();
  const driver = new LimiterDriver(core, () => clock.t, {}, timers);
  const log = { touched: [] as [string, number, boolean][], counted: [] as [number, number][], kept: [] as [string, string, string | undefined, number][], writes: [] as boolean[], proven: [] as number[], moved: 0 };
  const store = {
    proven: o.kept ?? true,
    changed: (urgent: boolean) => void log.writes.push(urgent),
  };
  const c = new Calls({
    core,
    driver,
    store,
    listing: { meta: META, touch: (m, now, asked) => void log.touched.push([m.key, now, asked]) },
    telemetry: { called: (calls, ops) => void log.counted.push([calls, ops]), moved: () => void log.moved++ },
    usage: { add: (id, key, filed, _u, at) => void log.kept.push([id, key, filed, at]) },
    now: () => clock.t,
    prove: (now) => {
      log.proven.push(now);
      store.proven = true;
    },
    stated: (m) => (m.key === META.key ? (o.stated ?? null) : null),
    cacheReadsFree: () => o.cacheReadsFree ?? false,
    drawn: () => o.drawn ?? null,
  });
  return { c, core, clock, log, store };
}

describe("Calls", () => {
  it("a request starts the key's windows at the quota its operator states; the end of old ones does not", async () => {
    const { c, core, clock } = calls({ stated: { requests: 3 } });
    c.apply(META, [{ t: "release", id: "none" }], 1);
    expect(core.quota.requests).toBeNull();
    const first = c.apply(META, [acquire("a:1"), acquire("b:1"), acquire("c:1"), acquire("d:1")], 1).reply;
    // Three a minute, the bucket full at the first request (less the limiter's margin): the rest wait for the refill.
    const granted = first.results.filter((r) => (r as { granted?: boolean }).granted).length;
    expect(granted).toBeGreaterThanOrEqual(2);
    expect(granted).toBeLessThanOrEqual(3);
    expect(first.queued).toBe(4 - granted);
    expect(core.quota.requests).toMatchObject({ limit: 3, stated: 3, source: "refusals" });
    expect(core.pacing().ratePerMin).toBe(3);
    clock.t += 1;
    expect(await c.acquire({ ...META, leaseId: "e:1", cost: 10, retry: false, waitMs: 0 })).toMatchObject({ granted: false });
  });

  it("counts a batch as one call of its ops, lists the key as asked only when a request is in it, and replies with the key's levels", () => {
    const { c, core, log } = calls();
    const { reply } = c.apply(META, [acquire("a:1"), acquire("b:1")], 1);
    expect(reply).toMatchObject({ queued: 0, room: core.limitAt(1_000) - 2, epoch: core.epoch });
    expect(reply.results.map((r) => (r as { granted: boolean }).granted)).toEqual([true, true]);
    c.apply(META, [{ t: "release", id: "a:1" }], 0);
    expect(log.counted).toEqual([[1, 2], [0, 1]]);
    expect(log.touched).toEqual([[META.key, 1_000, true], [META.key, 1_000, false]]);
  });

  it("keeps the usage a release or a settle carries, dated when it was made, under the caller its lease was filed under", () => {
    const { c, log } = calls();
    c.apply(META, [{ t: "acquire", req: { leaseId: "a:1", cost: 10, retry: false, waitMs: 60_000, caller: "team-a" } }, acquire("b:1")], 1);
    c.apply(META, [
      { t: "settle", id: "a:1", outcome: { ...out(), usage: usage(5) } as SettleRequest, ageMs: 30 },
      { t: "release", id: "b:1", usage: usage(7), ageMs: 10 },
      { t: "release", id: "a:1" },
    ], 1);
    expect(log.kept).toEqual([["a:1", META.key, "team-a", 970], ["b:1", META.key, DEFAULT_CALLER, 990]]);
  });

  it("proves a key its first usage comes for, before keeping the usage", () => {
    const { c, log } = calls({ kept: false });
    c.release("a:1", usage(1));
    c.release("b:1", usage(1));
    expect(log.proven).toEqual([1_000]);
    expect(log.kept.map((k) => k[0])).toEqual(["a:1", "b:1"]);
  });

  it("writes at once what moved the limit or the gate, and lets the rest wait for the next flush", () => {
    const { c, clock, core, log } = calls();
    c.apply(META, [acquire("a:1"), acquire("b:1")], 1);
    clock.t = 1_100;
    c.apply(META, [{ t: "renew", id: "a:1" }], 1);
    // A 429 whose window is empty: the gate closes until its hint, and the limit stays.
    const empty = { ...NONE, retryAfterMs: 5_000, requests: { limit: 100, remaining: 0, resetAt: null } };
    const limit = core.aimd.limit;
    c.apply(META, [{ t: "settle", id: "b:1", outcome: { ...out({ cls: "rate_limit", status: 429, info: empty, final: false }), release: true } }], 1);
    expect(core.aimd.limit).toBe(limit);
    // Without a change, as a settle on its own too.
    c.settle("a:1", { ...out({ cls: "rate_limit", status: 429, info: empty, final: false }), release: true });
    expect(log.writes).toEqual([false, false, true, false]);
  });

  it("hands tickets out only for a kept key, with what a grant would have said", () => {
    const unkept = calls({ kept: false });
    expect(unkept.c.apply(META, [], 1, { want: 2, cost: 10 }).reply.tickets).toBeUndefined();
    const { c, core } = calls();
    const { reply } = c.apply(META, [], 1, { want: 2, cost: 10 });
    expect(reply.tickets).toMatchObject({ cost: 10, leaseTtlMs: cfg.leaseTtlMs, limit: core.aimd.limit });
    expect(reply.tickets!.ids).toHaveLength(2);
  });

  it("counts each single call and lists an acquire as asked", async () => {
    const { c, log } = calls();
    expect((await c.acquire({ ...META, leaseId: "a:1", cost: 1, retry: false, waitMs: 1_000 })).granted).toBe(true);
    expect(c.renew("a:1")).toBe(true);
    expect(c.cancel("x:1")).toBe(false);
    expect(c.release("a:1")).toBe(true);
    expect(log.counted).toEqual([[1, 1], [1, 1], [1, 1], [1, 1]]);
    expect(log.touched).toEqual([[META.key, 1_000, true]]);
    expect(log.moved).toBe(1);
  });

  it("on a key whose window leaves cache reads out, charges requests, renewals of leases it lost and tickets less what answers show was read", async () => {
    const costs = async (free: boolean) => {
      const { c, core } = calls({ cacheReadsFree: free });
      const big = (leaseId: string): Op => ({ t: "acquire", req: { leaseId, cost: 1_000, retry: false, waitMs: 60_000 } });
      c.apply(META, [big("a:1")], 1);
      // Its answer: 1,000 prompt tokens, 900 of them read from the provider's cache.
      c.apply(META, [{ t: "release", id: "a:1", usage: usage(1_000, 900) }, big("b:1")], 1);
      await c.acquire({ ...META, leaseId: "c:1", cost: 1_000, retry: false, waitMs: 1_000 });
      const { reply } = c.apply(META, [], 1, { want: 1, cost: 1_000 });
      const ticket = reply.tickets!.ids[0]!;
      // A renewal of a lease the key lost (its Worker slow) holds it again at what it is charged.
      c.apply(META, [{ t: "renew", id: "d:1", cost: 1_000 }], 1);
      c.renew("e:1", 1_000);
      return { b: core.lease("b:1")?.cost, c: core.lease("c:1")?.cost, d: core.lease("d:1")?.cost, e: core.lease("e:1")?.cost, ticket: core.lease(ticket)?.cost, told: reply.tickets!.cost };
    };
    expect(await costs(false)).toEqual({ b: 1_000, c: 1_000, d: 1_000, e: 1_000, ticket: 1_000, told: 1_000 });
    // The first answer is all there is: 900 of 1,000 read, so 100 charged. The isolate is still told the estimate it compares.
    expect(await costs(true)).toEqual({ b: 100, c: 100, d: 100, e: 100, ticket: 100, told: 1_000 });
    // What the admin view shows: the share, only where the window leaves cache reads out.
    const free = calls({ cacheReadsFree: true });
    expect(free.c.cacheReadShare(1_000)).toBe(0);
    free.c.release("x:1", usage(1_000, 900));
    expect(free.c.cacheReadShare(1_000)).toBeCloseTo(0.9);
    const counted = calls();
    counted.c.release("x:1", usage(1_000, 900));
    expect(counted.c.cacheReadShare(1_000)).toBeNull();
  });

  it("where the provider gives back what an answer did not use of its reservation, credits the stated window from the usage a settle or a release carries", async () => {
    const level = async (drawn?: (t: Tokens) => number) => {
      const { c, core } = calls({ stated: { tokens: 20_000 }, drawn });
      const big = (leaseId: string): Op => ({ t: "acquire", req: { leaseId, cost: 5_000, retry: false, waitMs: 60_000 } });
      c.apply(META, [big("a:1")], 1);
      await c.acquire({ ...META, leaseId: "b:1", cost: 5_000, retry: false, waitMs: 60_000 });
      // Answers of 100 prompt tokens and 20 output: one ends by a release on the batch, the other by a single settle.
      const answer = (): UsageRecord => ({ model: "m", tokens: { input: 100, output: 20, cached: 0, cacheWrite: 0 }, costUsd: null });
      c.apply(META, [{ t: "release", id: "a:1", usage: answer() }], 1);
      c.settle("b:1", { ...out(), release: true, usage: answer() });
      return Math.round(core.quota.tokens!.remaining);
    };
    // Drawn at its prompt and five times its output: 200 each, so 4,800 each back.
    expect(await level((t) => t.input - t.cached + 5 * t.output)).toBe(20_000 - 400);
    // A provider that keeps what it reserved: the window stays charged.
    expect(await level()).toBe(10_000);
  });
});
