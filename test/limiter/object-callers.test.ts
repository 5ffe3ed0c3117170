// The Limiter object with callers: caller and priority pass through to the fair queue, the
// answers carry the pacing hints, and the admin state lists the callers.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AcquireRequest, SettleRequest } from "../../src/limiter/types";

let n = 0;
function limiter() {
  const key = `openai:callers-${++n}:0000000000000000`;
  return { key, stub: env.LIMITER.get(env.LIMITER.idFromName(key)) };
}
const req = (key: string, leaseId: string, o: Partial<AcquireRequest> = {}): AcquireRequest => ({
  key, provider: "openai", model: "m", leaseId, cost: 10, retry: false, waitMs: 5_000, ...o,
});
const ok = (remaining: number): SettleRequest => ({
  cls: "success", status: 200, info: { retryAfterMs: null, requests: { limit: 600, remaining, resetAt: null }, tokens: null },
  latencyMs: 30, attempt: 1, final: true, release: true,
});

describe("Limiter Durable Object with callers", () => {
  it("grants carry the limit, and the rate once a quota is known", async () => {
    const { key, stub } = limiter();
    const first = await stub.acquire(req(key, "a"));
    expect(first).toMatchObject({ granted: true, limit: expect.any(Number) });
    expect(first.granted && first.ratePerMin).toBeUndefined();
    await stub.settle("a", ok(500));
    const second = await stub.acquire(req(key, "b"));
    expect(second).toMatchObject({ granted: true, ratePerMin: 600 });
  });

  it("a lone interactive call goes ahead of a batch job's queue", async () => {
    const { key, stub } = limiter();
    await stub.configure({ limit: 1 });
    await stub.acquire(req(key, "hold", { caller: "batch", priority: "low" }));
    const batch = Array.from({ length: 5 }, (_, i) => stub.acquire(req(key, `b${i}`, { caller: "batch", priority: "low" })));
    await new Promise((r) => setTimeout(r, 20));
    const dev = stub.acquire(req(key, "dev"));
    await new Promise((r) => setTimeout(r, 20));
    const order: string[] = [];
    for (const [id, p] of [["dev", dev], ...batch.map((p, i) => [`b${i}`, p] as const)] as const) void p.then(() => order.push(id));
    for (const id of ["hold", "dev", "b0", "b1", "b2", "b3"]) {
      await stub.release(id);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(order.slice(0, 3)).toEqual(["dev", "b0", "b1"]);
    const s = await stub.state();
    expect(s.callers.map((c) => [c.caller, c.lane, c.served]).sort()).toEqual([["(default)", "normal", 1], ["batch", "low", 6]]);
    await Promise.all(batch);
  });
});
