import { describe, expect, it, vi } from "vitest";
import { LimiterClient, LimiterUnavailable } from "../../src/proxy/limiter-client";
import type { AcquireResult } from "../../src/limiter/types";
import { META, withSession } from "../support/exchange";

const GRANT: AcquireResult = { granted: true, leaseId: "l", waitedMs: 0, leaseTtlMs: 60_000, limit: 16 };
const req = { key: "k", provider: "openai", model: "m", leaseId: "l", cost: 1, retry: false };

/** A namespace whose stubs answer with the scripted results in turn (one new stub per get()). */
function fakeNamespace(script: (() => Promise<unknown>)[]) {
  let i = 0;
  const get = vi.fn(() => withSession({ acquire: () => (script[i++] ?? script.at(-1)!)() }));
  return { ns: { idFromName: () => ({}), get } as never, get };
}
const flagged = (flags: object) => () => Promise.reject(Object.assign(new Error("object reset"), flags));

describe("LimiterClient", () => {
  it("retries a retryable object error with a fresh stub", async () => {
    const { ns, get } = fakeNamespace([flagged({ retryable: true }), () => Promise.resolve(GRANT)]);
    const client = new LimiterClient(ns, META, { waitUntil: () => {} });
    expect(await client.acquire(req, Date.now() + 5_000)).toEqual(GRANT);
    expect(get).toHaveBeenCalledTimes(2);
  });

  it("fails closed at once on an overloaded object", async () => {
    const { ns, get } = fakeNamespace([flagged({ overloaded: true, retryable: true })]);
    const client = new LimiterClient(ns, META, { waitUntil: () => {} });
    await expect(client.acquire(req, Date.now() + 5_000)).rejects.toBeInstanceOf(LimiterUnavailable);
    expect(get).toHaveBeenCalledTimes(1);
  });

  it("fails closed on an error that is not retryable", async () => {
    const { ns } = fakeNamespace([flagged({})]);
    await expect(new LimiterClient(ns, META, { waitUntil: () => {} }).acquire(req, Date.now() + 5_000)).rejects.toBeInstanceOf(LimiterUnavailable);
  });

  it("stops retrying at the deadline", async () => {
    const { ns, get } = fakeNamespace([flagged({ retryable: true })]);
    const started = Date.now();
    await expect(new LimiterClient(ns, META, { waitUntil: () => {} }).acquire(req, started + 300)).rejects.toBeInstanceOf(LimiterUnavailable);
    expect(get.mock.calls.length).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("gives up on an object that never answers, shortly after the deadline", async () => {
    const { ns } = fakeNamespace([() => new Promise(() => {})]);
    const started = Date.now();
    await expect(new LimiterClient(ns, META, { waitUntil: () => {} }).acquire(req, started + 100)).rejects.toThrow(/did not answer/);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("renews with the lease's cost, so an object that lost the lease can take it back", async () => {
    const ops: unknown[] = [];
    // No session is open (nothing acquired here): each renewal goes on a call of its own.
    const stub = { renew: async (id: string, cost: number) => (ops.push({ t: "renew", id, cost }), true) };
    const client = new LimiterClient({ idFromName: () => ({}), get: () => stub } as never, META, { waitUntil: () => {} });
    const stop = client.keepAlive("l", 750, 42); // renews every 250 ms
    await vi.waitFor(() => expect(ops.length).toBeGreaterThan(0), { timeout: 2_000 });
    stop();
    expect(ops[0]).toMatchObject({ t: "renew", id: "l", cost: 42 });
  });
});
