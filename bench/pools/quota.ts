// Pool row 3: a member whose key has no quota (the stand-in answers insufficient_quota) beside two
// healthy members of 600 RPM, for a long run (--pool-seconds, default 120 as the issue measures):
// every request must be answered by the others, and the bad member tried at most 5 times
// (POOL_OUT_MS at its default: out 10 s, doubling per failed return). Beside it: a raw key with no
// quota through the gateway, which can only hand its caller the provider's error.
import { configure, type Ctx, PROMPT, side } from "../context.ts";
import { raw } from "../rows.ts";
import { simulatePoolShape } from "../simulated.ts";
import { goal, pct, type Row, secs, share } from "../stats.ts";
import { admin, limitsOf, MEMBERS, mintFor } from "./config.ts";

const LATENCY_MS = 300;

export async function runQuota(ctx: Ctx) {
  const seconds = ctx.opts.poolSeconds ?? (ctx.opts.quick ? 20 : 120);
  const [a, b, broke] = MEMBERS.broke;
  const single = `sk-bench-pool-broke-single-${Date.now().toString(36)}`;
  configure(ctx, { latencyMs: LATENCY_MS, burst: 1 / 60, keyLimits: limitsOf([a, b], { rpm: 600 }), quotaExhaustedKeys: [broke.key, single] });
  const base = await side(ctx, { via: "gateway", apiKey: single, maxTokens: 16, k: 1, spec: { requests: 20, concurrency: 4 } });
  const vk = await mintFor(ctx, "broke");
  const run = await side(ctx, { via: "gateway", apiKey: vk.key, maxTokens: 16, k: 2, spec: { concurrency: 8, durationMs: seconds * 1_000 } });
  const per = (m: { key: string }) => run.upstream.byCredential[m.key] ?? { attempts: 0, successes: 0, rateLimited: 0, quotaErrors: 0, other: 0 };
  // When the bad member was tried, from the run's first attempt: a first wave, or the returns after each backoff?
  const brokeAt = run.upstream.log.filter((x) => x.credential === broke.key).map((x) => x.at - (run.upstream.firstAttemptAt ?? 0));
  const state = (await admin(ctx).pools()).pools.find((p) => p.name === "bench-broke")?.members.find((m) => m.name === broke.name);
  // The simulator with the same members, fleet and number of requests (its run is as long as theirs take).
  const sim = simulatePoolShape({
    members: [{ name: a.name, rpm: 600 }, { name: b.name, rpm: 600 }, { name: broke.name, rpm: 600, exhausted: true }],
    shape: { latencyMs: LATENCY_MS, burst: 1 / 60 },
    fleet: { k: 2, c: 8, n: run.fleet.requests, maxTokens: 16, promptChars: PROMPT.length },
  });
  const failures = (f: typeof run.fleet) => Object.entries(f.failures).map(([k, n]) => `${k}×${n}`).join(", ");
  const scenario = `pools: 2 members of 600 RPM + 1 with insufficient_quota, ${secs(seconds * 1_000)} run, 2 x 8 in flight, ${LATENCY_MS} ms`;
  const rows: Row[] = [
    goal({ scenario, metric: "answered (by the other members)", baseline: `raw key without quota: ${base.fleet.ok}/${base.fleet.requests}${base.fleet.failed ? ` (${failures(base.fleet)})` : ""}`, value: `${run.fleet.ok}/${run.fleet.requests}${run.fleet.failed ? ` (${failures(run.fleet)})` : ""}` }, "all", run.fleet.failed === 0 && run.fleet.requests > 0),
    goal({ scenario, metric: `attempts on the member without quota in ${secs(seconds * 1_000)}`, baseline: `raw key: ${base.upstream.attempts} for ${base.fleet.requests} requests`, value: `${per(broke).attempts} (${per(broke).quotaErrors} insufficient_quota), at ${brokeAt.slice(0, 8).map((t) => secs(t)).join(", ")}` }, seconds >= 120 ? "<= 5 in 2 min" : "<= 5 (run shorter than 2 min)", per(broke).attempts <= 5),
    { scenario, metric: "served by the healthy members; upstream 429 share", baseline: "", value: `${a.name} ${per(a).successes} / ${b.name} ${per(b).successes}; ${pct(share(run.upstream.rateLimited, run.upstream.attempts))} 429` },
    { scenario, metric: "simulator, same pool, fleet and requests, one isolate", baseline: "", value: `${sim.failed} failed of ${run.fleet.requests} in ${secs(sim.makespanMs)}; the member without quota tried ${sim.tried[broke.name] ?? 0} times` },
    { scenario, metric: "the bad member at the end (GET /admin/pools)", baseline: "", value: state ? `${state.state}${state.until ? ` until ${state.until}` : ""}${state.reason ? ` (${state.reason})` : ""}` : "not listed" },
  ];
  return { rows, data: { seconds, single: raw(base), pooled: raw(run), brokeAtMs: brokeAt, member: state ?? null, sim } };
}
