// An answer's usage at its key's object (src/limiter/usage.ts): once per lease into the outbox and
// the counters, filed under its lease's caller, and counted again after a restart.
import { describe, expect, it } from "vitest";
import { DEFAULT_CALLER } from "../../src/limiter/callers";
import { emptyCounters } from "../../src/limiter/counters";
import { KeyUsage } from "../../src/limiter/usage";
import type { UsageRecord } from "../../src/usage/types";

const usage = (input: number, costUsd: number | null = null, o: Partial<UsageRecord> = {}): UsageRecord => ({
  model: "m", tokens: { input, output: 1, cached: 0, cacheWrite: 0 }, costUsd, ...o,
});

/** A KeyUsage over a fake outbox that refuses a lease id it has seen, as the ledger's does. */
function keyUsage(kept: UsageRecord[] = []) {
  const added: [string, string, UsageRecord, number][] = [];
  const armed: number[] = [];
  let counters = emptyCounters();
  const u = new KeyUsage({
    ledger: {
      add: (id, key, r, at) => !added.some((a) => a[0] === id) && added.push([id, key, r, at]) > 0,
      due: () => (added.length > 0 ? 10_000 : null),
      since: (seq) => kept.slice(seq),
    },
    counters: () => counters,
    arm: (at) => void armed.push(at),
  });
  return { u, added, armed, counters: () => counters, reset: () => (counters = emptyCounters()) };
}

describe("KeyUsage", () => {
  it("keeps one answer's usage once per lease, counts its tokens and cost, and sets the outbox's write", () => {
    const { u, added, armed, counters } = keyUsage();
    u.add("a:1", "openai:k", undefined, usage(10, 0.5), 1_000);
    u.add("a:1", "openai:k", undefined, usage(10, 0.5), 1_001);
    expect(added).toEqual([["a:1", "openai:k", usage(10, 0.5), 1_000]]);
    expect(counters().tokens).toEqual({ input: 10, output: 1, cached: 0, cacheWrite: 0 });
    expect(counters().costUsd).toBe(0.5);
    expect(armed).toEqual([10_000]);
  });

  it("files a record under the caller its lease was granted to, and the default caller under none", () => {
    const { u, added } = keyUsage();
    u.add("a:1", "k", "(overflow)", usage(1, null, { caller: "caller-9999" }), 0);
    u.add("b:1", "k", DEFAULT_CALLER, usage(1), 0);
    u.add("c:1", "k", undefined, usage(1, null, { caller: "x" }), 0);
    expect(added.map((a) => a[2].caller)).toEqual(["(overflow)", undefined, "x"]);
  });

  it("counts an operation's end into the GenAI histograms, and into the counters of now (a reset replaces them)", () => {
    const { u, counters, reset } = keyUsage();
    reset();
    u.add("a:1", "k", undefined, usage(4, null, { ended: { op: "chat", model: "m", ms: 300 } }), 0);
    expect(Object.keys(counters().genai.duration)).toEqual(["chat\nm\n"]);
    expect(counters().tokens.input).toBe(4);
  });

  it("counts again after a restart the records kept since the counters were last written, and none without that row", () => {
    const kept = [usage(1), usage(2), usage(4)];
    const none = keyUsage(kept);
    none.u.recount(undefined);
    expect(none.counters().tokens.input).toBe(0);
    const { u, counters, added } = keyUsage(kept);
    u.recount(1);
    expect(counters().tokens.input).toBe(6);
    expect(added).toEqual([]);
  });
});
