import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import type { KeyMeta } from "../../src/limiter/types";

const usage = { model: "gpt-4o-mini", caller: "c", tokens: { input: 10, output: 4, cached: 0, cacheWrite: 0 }, costUsd: 0.01 };

describe("Limiter: usage riding the releases and settles", () => {
  it("counts a lease's usage once, whichever way it comes and however often", async () => {
    const key = "openai:usage-once:00000000000000ab";
    const meta: KeyMeta = { key, provider: "openai", model: "usage-once" };
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    const acquire = (id: string) => ({ t: "acquire" as const, req: { leaseId: id, cost: 10, retry: false, waitMs: 1_000 } });
    await stub.exchange(meta, [acquire("a"), acquire("b")]);
    await stub.exchange(meta, [{ t: "release", id: "a", usage }]);
    // The same release again (a retried call), then on its own after a failed batch.
    await stub.exchange(meta, [{ t: "release", id: "a", usage }]);
    await stub.release("a", usage);
    const outcome = { cls: "success" as const, status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 5, attempt: 1, final: true, release: true };
    await stub.settle("b", { ...outcome, usage: { ...usage, tokens: null, costUsd: null } });
    const m = await stub.metrics();
    expect(m.counters.tokens).toEqual({ input: 10, output: 4, cached: 0, cacheWrite: 0 });
    expect(m.counters.costUsd).toBeCloseTo(0.01, 12);
    await runInDurableObject(stub, (obj: Limiter) => {
      expect(obj.ledger.rollup.requests).toBe(2);
      expect(obj.ledger.rollup.take().map((r) => [r.key, r.caller, r.requests, r.unknown])).toEqual([[key, "c", 2, 1]]);
    });
  });
});
