import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RUNS, TIMEOUT } from "./runs";
import { type Lane, LANES, type LaneWeights } from "../../src/limiter/lanes";
import { type Waiter, WaitQueue } from "../../src/limiter/queue";

/*
 * The fair queue alone, driven by random mixes of callers, lanes, costs and weights.
 *
 *   (W) Weighted shares converge: while every caller keeps work waiting, the tokens each is granted
 *       approach its share (its lane's weight over the weights of the lanes in use, split equally
 *       between the lane's callers) within 5% once the least-served caller has had 300 grants.
 *       Costs differ up to 40-fold between callers (100 to 4,000 tokens), so the cheapest callers
 *       get thousands of grants for the dearest one's 300: the shares are in tokens, not requests.
 *   (N) No waiter waits forever: however the other callers come and go (bursts, silences, lines
 *       refilled the moment they are served), a waiter is granted within the grants its own line's
 *       tokens need at its least share, plus a few requests' worth of slack per caller.
 *   Per-caller FIFO, cancels and deadlines per caller, and the limit and quotas under them are the
 *   core's properties (queue.property.test.ts, with callers and lanes).
 */

interface Flow {
  caller: string;
  lane: Lane;
  /** Costs are drawn uniformly from [lo, hi]. */
  lo: number;
  hi: number;
}

const flowArb = (i: number) =>
  fc
    .record({ lane: fc.constantFrom<Lane>(...LANES), lo: fc.integer({ min: 100, max: 1_000 }), spread: fc.integer({ min: 1, max: 4 }) })
    .map(({ lane, lo, spread }): Flow => ({ caller: `c${i}`, lane, lo, hi: lo * spread }));

const flowsArb = fc.integer({ min: 1, max: 5 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => flowArb(i))));
const weightsArb: fc.Arbitrary<LaneWeights> = fc.oneof(
  fc.constant({ high: 8, normal: 4, low: 1 }),
  fc.record({ high: fc.integer({ min: 1, max: 10 }), normal: fc.integer({ min: 1, max: 10 }), low: fc.integer({ min: 1, max: 10 }) }),
);

/** Each flow's least share: its lane's weight over the lanes in use, split between the lane's flows. */
function shares(flows: Flow[], weights: LaneWeights): number[] {
  const lanes = new Set(flows.map((f) => f.lane));
  const total = [...lanes].reduce((a, l) => a + weights[l], 0);
  return flows.map((f) => weights[f.lane] / total / flows.filter((g) => g.lane === f.lane).length);
}

/** A small deterministic generator, so a shrunk case replays exactly. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe("WaitQueue fair shares under random mixes", () => {
  it("(W) tokens granted converge to each caller's weighted share within 5%", () => {
    fc.assert(
      fc.property(flowsArb, weightsArb, fc.nat(), (flows, weights, seed) => {
        const q = new WaitQueue(weights);
        const random = rng(seed);
        let n = 0;
        const refill = (f: Flow) => q.push({ id: `${f.caller}-${n++}`, cost: f.lo + Math.floor(random() * (f.hi - f.lo + 1)), deadline: 1, retry: random() < 0.1, enqueuedAt: 0, caller: f.caller, lane: f.lane });
        const waiting = new Map(flows.map((f) => [f.caller, 0]));
        for (const f of flows) for (let i = 0; i < 3; i++, waiting.set(f.caller, waiting.get(f.caller)! + 1)) refill(f);
        const tokens = new Map(flows.map((f) => [f.caller, 0]));
        const grants = new Map(flows.map((f) => [f.caller, 0]));
        for (let i = 0; i < 100_000 && Math.min(...grants.values()) < 300; i++) {
          const w = q.shift()!;
          const f = flows.find((x) => x.caller === w.caller)!;
          tokens.set(f.caller, tokens.get(f.caller)! + w.cost);
          grants.set(f.caller, grants.get(f.caller)! + 1);
          refill(f); // every caller keeps work waiting
        }
        const total = [...tokens.values()].reduce((a, b) => a + b, 0);
        const want = shares(flows, weights);
        flows.forEach((f, i) => {
          const got = tokens.get(f.caller)! / total;
          expect(Math.abs(got / want[i]! - 1), `${f.caller} (${f.lane}, costs ${f.lo}-${f.hi}) got ${got.toFixed(4)} of the tokens, its share is ${want[i]!.toFixed(4)}`).toBeLessThanOrEqual(0.05);
        });
      }),
      // Each run grants thousands of times: a twentieth of the runs (at least 50) keeps the long run in minutes.
      { numRuns: Math.min(RUNS, Math.max(50, Math.ceil(RUNS / 20))) },
    );
  }, TIMEOUT);

  it("(N) a waiter is granted within its own line's tokens at its least share, whatever the others do", () => {
    fc.assert(
      fc.property(flowsArb, weightsArb, fc.nat(), fc.integer({ min: 0, max: 30 }), (flows, weights, seed, ahead) => {
        const q = new WaitQueue(weights);
        const random = rng(seed);
        let n = 0;
        const push = (f: Flow, id = `${f.caller}-${n++}`): Waiter => {
          const w: Waiter = { id, cost: f.lo + Math.floor(random() * (f.hi - f.lo + 1)), deadline: 1, retry: false, enqueuedAt: 0, caller: f.caller, lane: f.lane };
          q.push(w);
          return w;
        };
        // The others start with random backlogs; the target line has `ahead` before the target.
        const [mine, ...others] = flows as [Flow, ...Flow[]];
        for (const f of others) for (let i = Math.floor(random() * 20); i > 0; i--) push(f);
        let owed = 0;
        for (let i = 0; i < ahead; i++) owed += push(mine).cost;
        const target = push(mine, "target");
        owed += target.cost;
        const share = shares(flows, weights)[0]!;
        const maxCost = Math.max(...flows.map((f) => f.hi));
        const minCost = Math.min(...flows.map((f) => f.lo));
        // Tokens the key grants before the target's line is paid for, at most; each grant is at least minCost.
        const bound = Math.ceil((owed / share + 4 * maxCost * flows.length) / minCost) + flows.length;
        for (let i = 0; ; i++) {
          expect(i, `target still waiting after ${i} grants (bound ${bound})`).toBeLessThanOrEqual(bound);
          // The others come and go: a burst, a silence, or a refill the moment they are served.
          for (const f of others) {
            const r = random();
            if (r < 0.3) push(f);
            else if (r < 0.35) for (let k = 0; k < 10; k++) push(f);
          }
          const w = q.shift()!;
          if (w.id === "target") break;
          const f = flows.find((x) => x.caller === w.caller)!;
          if (f !== mine && random() < 0.5) push(f);
        }
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT);
});
