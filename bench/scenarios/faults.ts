// Faults: 10% 524 + 5% 529 + 5% 503 on accepted requests, no rate pressure (limits far away, but
// headers sent as a real provider does). Every request must be answered, and transient errors
// must never cut concurrency (read from the limiter's history through the admin API).
import { configure, type Ctx, type Scenario, side } from "../context.ts";
import { limiterRow, outcomeRows, raw } from "../rows.ts";
import { simRow, simulate } from "../simulated.ts";
import { secs } from "../stats.ts";

const FAULTS = { "524": 0.1, "529": 0.05, "503": 0.05 };

async function run(ctx: Ctx) {
  const shape = { rpm: 1_000_000, tpm: 100_000_000, latencyMs: 300, jitterMs: 200, faults: FAULTS };
  configure(ctx, shape);
  const at = (via: "direct" | "gateway") => side(ctx, { via, apiKey: `sk-bench-faults-${via}`, maxTokens: 16 });
  const direct = await at("direct");
  const gw = await at("gateway");
  const scenario = `faults 10% 524 + 5% 529 + 5% 503, ${ctx.opts.k}x${ctx.opts.m} at ${ctx.opts.concurrency}`;
  const injected = (f: Record<string, number>) => Object.values(f).reduce((a, b) => a + b, 0);
  const rows = [
    ...outcomeRows(scenario, direct, gw),
    { scenario, metric: "faults injected upstream", baseline: String(injected(direct.upstream.faults)), value: String(injected(gw.upstream.faults)) },
    { scenario, metric: "makespan", baseline: secs(direct.fleet.makespan), value: secs(gw.fleet.makespan) },
    simRow(scenario, simulate(ctx, shape, 16), simulate(ctx, shape, 16, "direct")),
    limiterRow(scenario, gw, 0),
  ];
  return { rows, data: { faults: FAULTS, direct: raw(direct), gateway: raw(gw) } };
}

export const faults: Scenario = { name: "faults", run };
