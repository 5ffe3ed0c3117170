// Pool row 5: what a pooled request costs beside a raw-key request, side by side in one run: the
// same openai SDK clients, the stand-in answering at once with no limits, a raw key and a virtual
// key on a pool of two members taking turns (alternating runs, so background noise hits both
// alike). p50 at 1 in flight; throughput at 32 in flight (2 processes x 16).
import { configure, type Ctx, side, type SideSpec } from "../context.ts";
import { goal, ms, perSec, type Row, share, spread, times } from "../stats.ts";
import { mintFor } from "./config.ts";

interface Pooled {
  ok: number;
  seconds: number;
  latency: number[];
}

async function alternate(ctx: Ctx, keys: Record<string, string>, rounds: number, spec: Omit<SideSpec, "via" | "apiKey">): Promise<Record<string, Pooled>> {
  const out: Record<string, Pooled> = Object.fromEntries(Object.keys(keys).map((k) => [k, { ok: 0, seconds: 0, latency: [] }]));
  for (let r = 0; r < rounds; r++)
    for (const [name, apiKey] of Object.entries(keys)) {
      const { fleet } = await side(ctx, { ...spec, via: "gateway", apiKey });
      out[name]!.ok += fleet.ok;
      out[name]!.seconds += fleet.makespan / 1000;
      out[name]!.latency.push(...fleet.latency);
    }
  return out;
}

export async function runOverhead(ctx: Ctx) {
  configure(ctx, {});
  const slice = ctx.opts.quick ? 1_000 : 3_000;
  const keys = {
    raw: `sk-bench-pool-raw-${Date.now().toString(36)}`,
    pool1: (await mintFor(ctx, "overhead1")).key,
    pool2: (await mintFor(ctx, "overhead")).key,
  };
  const base = { maxTokens: 16 };
  await alternate(ctx, keys, 1, { ...base, k: 1, spec: { concurrency: 4, durationMs: 1_000 } }); // warm all three
  const low = await alternate(ctx, keys, 3, { ...base, k: 1, spec: { concurrency: 1, durationMs: slice } });
  const [r, p1, p2] = [spread(low.raw!.latency), spread(low.pool1!.latency), spread(low.pool2!.latency)];
  const high = await alternate(ctx, keys, 2, { ...base, k: 2, spec: { concurrency: 16, durationMs: slice } });
  const rate = (x: Pooled) => share(x.ok, x.seconds);
  const [ratio1, ratio2] = [share(rate(high.pool1!), rate(high.raw!)), share(rate(high.pool2!), rate(high.raw!))];
  const scenario = "pools: overhead, a virtual key on a pool of 1 and of 2 beside a raw key (stand-in latency 0, no limits; alternating runs)";
  const rows: Row[] = [
    { scenario, metric: "1 in flight: p50 / p99, pool of 1; pool of 2", baseline: `raw key: ${ms(r.p50)} / ${ms(r.p99)}`, value: `${ms(p1.p50)} / ${ms(p1.p99)}; ${ms(p2.p50)} / ${ms(p2.p99)}` },
    goal({ scenario, metric: "1 in flight: added p50, pool of 1; pool of 2", baseline: "0", value: `${ms(p1.p50 - r.p50)}; ${ms(p2.p50 - r.p50)}` }, "<= +1 ms, both", p1.p50 - r.p50 <= 1 && p2.p50 - r.p50 <= 1),
    goal({ scenario, metric: "throughput at 32 in flight, pool of 1; pool of 2 (its requests spread over two limiters)", baseline: `raw key: ${perSec(rate(high.raw!))}`, value: `${perSec(rate(high.pool1!))} = ${times(ratio1)}; ${perSec(rate(high.pool2!))} = ${times(ratio2)}` }, ">= 0.9x, both", ratio1 >= 0.9 && ratio2 >= 0.9),
  ];
  return { rows, data: { low: { raw: r, pool1: p1, pool2: p2 }, throughput: { raw: rate(high.raw!), pool1: rate(high.pool1!), pool2: rate(high.pool2!), ratio1, ratio2 } } };
}
