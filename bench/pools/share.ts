// Pool rows 1 and 2: two members of 600 RPM, then members of 900 and 300 RPM, each through the
// openai SDK holding a virtual key, beside one raw key of 1,200 RPM (the pooled limit as a single
// key). 1 s buckets as real providers refill them; 300 ms answers. The pooled ideal: every request
// beyond the buckets' starting content at the combined 1,200 RPM, plus one answer.
import { configure, type Ctx, PROMPT, type Side, side } from "../context.ts";
import { raw } from "../rows.ts";
import { type PoolSimResult, simulatePoolShape } from "../simulated.ts";
import { goal, pct, type Row, secs, share, times } from "../stats.ts";
import { limitsOf, type Member, MEMBERS, mintFor, type PoolName } from "./config.ts";

const LATENCY_MS = 300;
const TOTAL_RPM = 1_200;
/** Each bucket holds a second of its limit, as the real-rpm shape's do. */
const SECOND = 1 / 60;
const MAX_TOKENS = 16;

export const fleetOf = (ctx: Ctx) => (ctx.opts.quick ? { k: 2, m: 20, c: 8 } : { k: 8, m: 30, c: 16 });

/** (n - what the buckets start with) at the combined rate, plus one answer. */
export function pooledIdealMs(n: number, rpm = TOTAL_RPM, startContent = TOTAL_RPM * SECOND): number {
  return (Math.max(0, n - startContent) * 60_000) / rpm + LATENCY_MS;
}

/** Each member's part of the run's successes at the stand-in, in the pool's order. */
export function shares(s: Side, ms: readonly Member[]): number[] {
  const ok = ms.map((m) => s.upstream.byCredential[m.key]?.successes ?? 0);
  const all = ok.reduce((a, b) => a + b, 0);
  return ok.map((x) => share(x, all));
}

const share429 = (s: Side) => share(s.upstream.rateLimited, s.upstream.attempts);
const answered = (s: Side) => `${s.fleet.ok}/${s.fleet.requests}${s.fleet.failed ? ` (${Object.entries(s.fleet.failures).map(([k, n]) => `${k}×${n}`).join(", ")})` : ""}`;
const makespan = (s: Side, ideal: number) => `${secs(s.fleet.makespan)} = ${times(s.fleet.makespan / ideal)}`;
const shareText = (s: Side, ms: readonly Member[]) => shares(s, ms).map((x, i) => `${ms[i]!.name} ${pct(x)}`).join(" / ");

/** The simulator's figure for the same pool and fleet, against the same ideal. */
export function simText(r: PoolSimResult, ideal: number): string {
  const all = Object.values(r.served).reduce((a, b) => a + b, 0);
  const parts = Object.entries(r.served).map(([name, n]) => `${name} ${pct(share(n, all))}`).join(" / ");
  return `${secs(r.makespanMs)} = ${times(r.makespanMs / ideal)}, ${pct(share(r.upstream429, r.attempts))} 429, ${parts}, ${r.failed} failed`;
}

const simulated = (ctx: Ctx, members: readonly Member[], rpms: number[]) => {
  const { k, m, c } = fleetOf(ctx);
  return simulatePoolShape({
    members: members.map((x, i) => ({ name: x.name, rpm: rpms[i]! })),
    shape: { latencyMs: LATENCY_MS, burst: SECOND },
    fleet: { k, c, n: k * m, maxTokens: MAX_TOKENS, promptChars: PROMPT.length },
  });
};

async function pooled(ctx: Ctx, pool: PoolName): Promise<Side> {
  const { k, m, c } = fleetOf(ctx);
  const vk = await mintFor(ctx, pool);
  return side(ctx, { via: "gateway", apiKey: vk.key, maxTokens: MAX_TOKENS, k, spec: { requests: m, concurrency: c } });
}

export async function runShares(ctx: Ctx) {
  const { k, m, c } = fleetOf(ctx);
  const n = k * m;
  const single = `sk-bench-pool-single-${Date.now().toString(36)}`;
  configure(ctx, {
    latencyMs: LATENCY_MS, burst: SECOND,
    keyLimits: { ...limitsOf(MEMBERS.even, { rpm: 600 }), ...limitsOf(MEMBERS.skew, [{ rpm: 900 }, { rpm: 300 }]), [single]: { rpm: TOTAL_RPM } },
  });
  const ideal = pooledIdealMs(n);
  const base = await side(ctx, { via: "gateway", apiKey: single, maxTokens: MAX_TOKENS, k, spec: { requests: m, concurrency: c } });
  const even = await pooled(ctx, "even");
  const skew = await pooled(ctx, "skew");
  const baseline = { makespan: makespan(base, ideal), upstream: `${base.upstream.attempts}, ${pct(share429(base))} 429`, answered: answered(base) };

  const simEven = simulated(ctx, MEMBERS.even, [600, 600]);
  const simSkew = simulated(ctx, MEMBERS.skew, [900, 300]);
  const evenShares = shares(even, MEMBERS.even);
  const skewShares = shares(skew, MEMBERS.skew);
  const within = (xs: number[], want: number[]) => xs.every((x, i) => Math.abs(x - want[i]!) <= 0.1);
  const s1 = `pools: 2 members of 600 RPM (1 s buckets) beside 1 key of 1,200 RPM, openai SDK with a virtual key, ${k}x${m} at ${c}, ${LATENCY_MS} ms`;
  const s2 = `pools: members of 900 and 300 RPM beside 1 key of 1,200 RPM, same fleet`;
  const rows: Row[] = [
    goal({ scenario: s1, metric: `makespan / pooled ideal ${secs(ideal)}`, baseline: baseline.makespan, value: makespan(even, ideal) }, "<= 1.10x", even.fleet.makespan / ideal <= 1.1),
    goal({ scenario: s1, metric: "upstream attempts, 429 share", baseline: baseline.upstream, value: `${even.upstream.attempts}, ${pct(share429(even))} 429` }, "<= 2%", share429(even) <= 0.02),
    goal({ scenario: s1, metric: "members' shares of the successes", baseline: "one key: 100%", value: shareText(even, MEMBERS.even) }, "each 50% ± 10 points", within(evenShares, [0.5, 0.5])),
    goal({ scenario: s1, metric: "answered", baseline: baseline.answered, value: answered(even) }, "all", even.fleet.ok === even.fleet.requests),
    { scenario: s1, metric: "simulator, same pool and fleet, one isolate (makespan, 429s, shares)", baseline: "", value: simText(simEven, ideal) },
    goal({ scenario: s2, metric: "members' shares of the successes", baseline: "one key: 100%", value: shareText(skew, MEMBERS.skew) }, "75% / 25% ± 10 points", within(skewShares, [0.75, 0.25])),
    { scenario: s2, metric: `makespan / pooled ideal ${secs(ideal)}`, baseline: baseline.makespan, value: makespan(skew, ideal) },
    { scenario: s2, metric: "upstream attempts, 429 share", baseline: baseline.upstream, value: `${skew.upstream.attempts}, ${pct(share429(skew))} 429` },
    goal({ scenario: s2, metric: "answered", baseline: baseline.answered, value: answered(skew) }, "all", skew.fleet.ok === skew.fleet.requests),
    { scenario: s2, metric: "simulator, same pool and fleet, one isolate (makespan, 429s, shares)", baseline: "", value: simText(simSkew, ideal) },
  ];
  return { rows, data: { n, idealMs: ideal, single: raw(base), even: { ...raw(even), shares: evenShares, sim: simEven }, skew: { ...raw(skew), shares: skewShares, sim: simSkew } } };
}
