// Pool row 5: what a pooled request costs beside a raw-key request, side by side in one run: the
// same openai SDK clients, the stand-in answering at once with no limits, a raw key and virtual
// keys on a pool of one member and of two, taking turns in short slices. On a shared 2-core machine
// a burst of someone else's load can land on one slice, so each figure is the median over rounds of
// the paired difference (p50) or ratio (throughput) within the round, not one pooled number.
import { configure, type Ctx, side, type SideSpec } from "../context.ts";
import { goal, ms, perSec, type Row, share, spread, times } from "../stats.ts";
import { mintFor } from "./config.ts";

type Name = "raw" | "pool1" | "pool2";
interface Round {
  p50: Record<Name, number>;
  rate: Record<Name, number>;
}

async function rounds(ctx: Ctx, keys: Record<Name, string>, n: number, spec: Omit<SideSpec, "via" | "apiKey">): Promise<Round[]> {
  const out: Round[] = [];
  for (let r = 0; r < n; r++) {
    const round = { p50: {}, rate: {} } as Round;
    // Each round in another order, so no key always runs right after the same one.
    const order = (Object.keys(keys) as Name[]).map((k, i, all) => all[(i + r) % all.length]!);
    for (const name of order) {
      const { fleet } = await side(ctx, { ...spec, via: "gateway", apiKey: keys[name] });
      round.p50[name] = spread(fleet.latency).p50;
      round.rate[name] = share(fleet.ok, fleet.makespan / 1000);
    }
    out.push(round);
  }
  return out;
}

const median = (xs: number[]) => spread(xs).p50;

export async function runOverhead(ctx: Ctx) {
  configure(ctx, {});
  const slice = ctx.opts.quick ? 500 : 1_500;
  const n = ctx.opts.quick ? 2 : 8;
  const keys: Record<Name, string> = {
    raw: `sk-bench-pool-raw-${Date.now().toString(36)}`,
    pool1: (await mintFor(ctx, "overhead1")).key,
    pool2: (await mintFor(ctx, "overhead")).key,
  };
  const base = { maxTokens: 16 };
  await rounds(ctx, keys, 1, { ...base, k: 1, spec: { concurrency: 4, durationMs: 1_000 } }); // warm all three
  const low = await rounds(ctx, keys, n, { ...base, k: 1, spec: { concurrency: 1, durationMs: slice } });
  const high = await rounds(ctx, keys, n, { ...base, k: 2, spec: { concurrency: 16, durationMs: slice } });
  const added = (name: Name) => median(low.map((r) => r.p50[name] - r.p50.raw));
  const ratio = (name: Name) => median(high.map((r) => share(r.rate[name], r.rate.raw)));
  const [a1, a2, t1, t2] = [added("pool1"), added("pool2"), ratio("pool1"), ratio("pool2")];
  const scenario = `pools: overhead, a virtual key on a pool of 1 and of 2 beside a raw key (stand-in latency 0, no limits; ${n} rounds of ${ms(slice)} slices, medians of paired figures)`;
  const rows: Row[] = [
    { scenario, metric: "1 in flight: p50 (median of rounds), raw key; pool of 1; pool of 2", baseline: ms(median(low.map((r) => r.p50.raw))), value: `${ms(median(low.map((r) => r.p50.pool1)))}; ${ms(median(low.map((r) => r.p50.pool2)))}` },
    goal({ scenario, metric: "1 in flight: added p50, pool of 1; pool of 2 (median of the rounds' differences)", baseline: "0", value: `${ms(a1)}; ${ms(a2)}` }, "<= +1 ms, both", a1 <= 1 && a2 <= 1),
    goal({ scenario, metric: "throughput at 32 in flight, pool of 1; pool of 2 (median of the rounds' ratios)", baseline: `raw key: ${perSec(median(high.map((r) => r.rate.raw)))}`, value: `${times(t1)}; ${times(t2)}` }, ">= 0.9x, both", t1 >= 0.9 && t2 >= 0.9),
  ];
  return { rows, data: { low, high, added: { pool1: a1, pool2: a2 }, ratio: { pool1: t1, pool2: t2 } } };
}
