// A run against a provider quota (RPM or TPM): the key starts drained (it has been busy), so the
// stand-in admits `units` per minute and nothing can finish before the last admitted request has
// been served: ideal = N x cost / limit + one mean latency. Direct SDKs beside the gateway.
import type { StandinOptions } from "../test/support/standin/index.ts";
import { configure, type Ctx, type Scenario, side } from "./context.ts";
import { limiterRow, outcomeRows, raw } from "./rows.ts";
import { simRow, simulate } from "./simulated.ts";
import { goal, secs, times } from "./stats.ts";

const LATENCY = { latencyMs: 800, jitterMs: 400 };

export interface Paced {
  name: string;
  label: (limit: number) => string;
  maxTokens: number;
  /** What one request draws from the limited bucket. */
  cost: number;
  /** The stand-in option that holds the limit. */
  limit: (perMinute: number) => Partial<StandinOptions>;
  /** Request sizes that empty the bucket before "go", largest first. */
  drain: number[];
}

export function paced(p: Paced): Scenario {
  const run = async (ctx: Ctx) => {
    const n = ctx.opts.k * ctx.opts.m;
    const perMinute = Math.max(1, Math.round((n * p.cost * 60) / (ctx.opts.quick ? 8 : 40)));
    const shape = { ...p.limit(perMinute), ...LATENCY };
    configure(ctx, shape);
    const ideal = ((n * p.cost) / perMinute) * 60_000 + LATENCY.latencyMs + LATENCY.jitterMs / 2;
    const at = (via: "direct" | "gateway") => side(ctx, { via, apiKey: `sk-bench-${p.name}-${via}`, maxTokens: p.maxTokens, drain: p.drain });
    const direct = await at("direct");
    const gw = await at("gateway");
    const scenario = `${p.label(perMinute)}, ${ctx.opts.k}x${ctx.opts.m} at ${ctx.opts.concurrency}`;
    const over = (ms: number) => `${secs(ms)} = ${times(ms / ideal)}`;
    const makespan = { scenario, metric: `makespan / ideal (${secs(ideal)})`, baseline: over(direct.fleet.makespan), value: over(gw.fleet.makespan) };
    const rows = [
      ...outcomeRows(scenario, direct, gw, 0.01),
      goal(makespan, "<= 1.05x", gw.fleet.makespan <= 1.05 * ideal),
      simRow(scenario, simulate(ctx, { ...shape, drained: true }, p.maxTokens)),
      limiterRow(scenario, gw),
    ];
    return { rows, data: { perMinute, n, idealMs: ideal, direct: raw(direct), gateway: raw(gw) } };
  };
  return { name: p.name, run };
}
