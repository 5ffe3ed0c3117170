// Concurrency cap with no useful headers: the stand-in answers 429 beyond CAP in flight and sends
// no rate-limit headers (only its generic retry-after: 1), so AIMD has to find the cap by itself.
// Utilisation = busy time served / (CAP x makespan), busy time = successes x mean latency.
import { configure, type Ctx, type Scenario, type Side, side } from "../context.ts";
import { limiterRow, outcomeRows, raw } from "../rows.ts";
import { simRow, simulate } from "../simulated.ts";
import { goal, pct, perSec, share } from "../stats.ts";

const CAP = 12;
const LATENCY = { latencyMs: 500, jitterMs: 200 };
const MEAN_MS = LATENCY.latencyMs + LATENCY.jitterMs / 2;

const utilisation = (s: Side) => share(s.upstream.successes * MEAN_MS, CAP * s.fleet.makespan);
const throughput = (s: Side) => `${perSec(share(s.fleet.ok, s.fleet.makespan / 1000))}`;

async function run(ctx: Ctx) {
  const shape = { maxConcurrent: CAP, headers: false, ...LATENCY };
  configure(ctx, shape);
  const at = (via: "direct" | "gateway") => side(ctx, { via, apiKey: `sk-bench-cap-${via}`, maxTokens: 16 });
  const direct = await at("direct");
  const gw = await at("gateway");
  const scenario = `concurrency cap ${CAP}, no headers, ${ctx.opts.k}x${ctx.opts.m} at ${ctx.opts.concurrency}`;
  const rows = [
    ...outcomeRows(scenario, direct, gw),
    goal({ scenario, metric: "utilisation of the cap", baseline: pct(utilisation(direct)), value: pct(utilisation(gw)) }, ">= 90%", utilisation(gw) >= 0.9),
    { scenario, metric: `answers/s (cap/latency = ${perSec((CAP * 1000) / MEAN_MS)})`, baseline: throughput(direct), value: throughput(gw) },
    simRow(scenario, simulate(ctx, shape, 16)),
    limiterRow(scenario, gw),
  ];
  return { rows, data: { cap: CAP, meanLatencyMs: MEAN_MS, utilisation: { direct: utilisation(direct), gateway: utilisation(gw) }, direct: raw(direct), gateway: raw(gw) } };
}

export const cap: Scenario = { name: "cap", run };
