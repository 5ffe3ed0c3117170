// Overhead: no rate pressure, stand-in latency 0, the gateway beside a plain pass-through Worker
// run the same way (wrangler dev). Runs alternate A B A B so background noise hits both alike.
// Added latency at 1 and 4 in flight (SDK clients); throughput at 2 x 16 in flight.
import { configure, type Ctx, type Scenario, side, type SideSpec, type Via } from "../context.ts";
import { goal, ms, perSec, type Row, share, spread, times } from "../stats.ts";

export interface Pooled {
  ok: number;
  seconds: number;
  latency: number[];
}

/** `rounds` alternating runs of each target; answers, time and latencies pooled per target. */
export async function alternate(ctx: Ctx, vias: Via[], rounds: number, spec: Omit<SideSpec, "via">): Promise<Record<string, Pooled>> {
  const out: Record<string, Pooled> = Object.fromEntries(vias.map((v) => [v, { ok: 0, seconds: 0, latency: [] }]));
  for (let r = 0; r < rounds; r++)
    for (const via of vias) {
      const { fleet } = await side(ctx, { ...spec, via });
      const p = out[via]!;
      p.ok += fleet.ok;
      p.seconds += fleet.makespan / 1000;
      p.latency.push(...fleet.latency);
    }
  return out;
}

const rate = (p: Pooled) => share(p.ok, p.seconds);

async function run(ctx: Ctx) {
  configure(ctx, {});
  const slice = ctx.opts.quick ? 1_000 : 3_000;
  const vias: Via[] = ["passthrough", "gateway"];
  const base = { apiKey: "sk-bench-overhead", maxTokens: 16 };
  await alternate(ctx, vias, 1, { ...base, k: 1, spec: { concurrency: 4, durationMs: 1_000 } }); // warm both
  const scenario = "overhead (stand-in latency 0, no limits)";
  const rows: Row[] = [];
  const data: Record<string, unknown> = {};
  for (const c of [1, 4]) {
    const r = await alternate(ctx, vias, 2, { ...base, k: 1, spec: { concurrency: c, durationMs: slice } });
    const [pt, gw] = [spread(r.passthrough!.latency), spread(r.gateway!.latency)];
    const added = gw.p50 - pt.p50;
    rows.push({ scenario, metric: `${c} in flight: p50 / p99`, baseline: `${ms(pt.p50)} / ${ms(pt.p99)}`, value: `${ms(gw.p50)} / ${ms(gw.p99)}` });
    rows.push(goal({ scenario, metric: `${c} in flight: added p50 / p99`, baseline: "0", value: `${ms(added)} / ${ms(gw.p99 - pt.p99)}` }, "p50 <= 1 ms", added <= 1));
    data[`c${c}`] = { passthrough: pt, gateway: gw };
  }
  const t = await alternate(ctx, vias, 2, { ...base, k: 2, spec: { concurrency: 16, durationMs: slice } });
  const ratio = share(rate(t.gateway!), rate(t.passthrough!));
  rows.push(goal({ scenario, metric: "throughput at 2x16 in flight (gateway / plain Worker)", baseline: perSec(rate(t.passthrough!)), value: `${perSec(rate(t.gateway!))} = ${times(ratio)}` }, ">= 0.9x", ratio >= 0.9));
  data.throughput = { passthrough: rate(t.passthrough!), gateway: rate(t.gateway!), ratio };
  return { rows, data };
}

export const overhead: Scenario = { name: "overhead", passthrough: true, run };
