// Overhead: no rate pressure, stand-in latency 0, the gateway beside a plain pass-through Worker
// run the same way (wrangler dev), and beside the same plain Worker after one empty Durable Object
// call (the floor of any design that asks an object per request). Runs alternate, each round in a
// new order, so background noise hits all alike. Added latency at 1 and 2 in flight (SDK clients);
// throughput at 32 and 48 in flight, and beside it the CPU each Worker's workerd spent an answer
// (what a request costs the runtime, apart from the wait for a core); the limiter's own count of
// calls into it per request in each (a key with room hands its isolates tickets: most requests make
// no call, issue 36). With
// `--against <rev or dir>` and `--probe`, the gateways of other trees (and probes: gateways that
// never ask their limiter) run in the same rounds, each set against the same plain Worker.
import { loadavg } from "node:os";
import { configure, type Ctx, limiterCalls, type Scenario, side, type SideSpec, type Via } from "../context.ts";
import { compared, cpuRows, latencyRows, type Pooled, rotation, throughputRows } from "../side-by-side.ts";
import { goal, type Row, share } from "../stats.ts";

export type { Pooled };

/** `rounds` alternating runs of each target, each round in a new order; answers, time and latencies pooled per target. */
export async function alternate(ctx: Ctx, vias: Via[], rounds: number, spec: Omit<SideSpec, "via">): Promise<Record<string, Pooled>> {
  const out: Record<string, Pooled> = Object.fromEntries(vias.map((v) => [v, { ok: 0, seconds: 0, latency: [], key: null, cpuMs: 0 }]));
  for (let r = 0; r < rounds; r++)
    for (const via of rotation(vias, r)) {
      const { fleet, cpuMs } = await side(ctx, { ...spec, via });
      const p = out[via]!;
      p.ok += fleet.ok;
      p.seconds += fleet.makespan / 1000;
      p.cpuMs += cpuMs;
      p.latency.push(...fleet.latency);
      p.key ??= fleet.key;
    }
  return out;
}

async function run(ctx: Ctx) {
  configure(ctx, {});
  const slice = ctx.opts.quick ? 1_000 : 3_000;
  const gateways = compared(ctx.name, ctx.beside);
  const vias: Via[] = ["passthrough", "floor", ...gateways.map((g) => g.via)];
  const base = { apiKey: "sk-bench-overhead", maxTokens: 16 };
  await alternate(ctx, vias, 1, { ...base, k: 1, spec: { concurrency: 4, durationMs: 1_000 } }); // warm them all
  const scenario = "overhead (stand-in latency 0, no limits)";
  const rows: Row[] = [];
  const data: Record<string, unknown> = {};
  // Every gateway gets the same short run before a level, not only the one whose key is counted.
  const gatewayVias = gateways.map((g) => g.via);
  const lowKey = (await alternate(ctx, gatewayVias, 1, { ...base, k: 1, spec: { concurrency: 1, durationMs: 200 } })).gateway!.key;
  for (const c of [1, 2]) {
    const before = await limiterCalls(ctx, lowKey);
    const load = loadavg()[0]!;
    const r = await alternate(ctx, vias, 3, { ...base, k: 1, spec: { concurrency: c, durationMs: slice } });
    const after = await limiterCalls(ctx, lowKey);
    const lat = latencyRows(scenario, c, (load + loadavg()[0]!) / 2, r, gateways);
    rows.push(...lat.rows);
    const calls = callsPer(before, after);
    rows.push(goal({ scenario, metric: `object calls per proxied request at ${c} in flight, a key with room (limiter's own count; ops carried)`, baseline: "1 (an acquire each)", value: calls ? `${calls.calls.toFixed(2)} (${calls.ops.toFixed(2)} ops)` : "?" }, "<= 0.5", calls !== null && calls.calls <= 0.5));
    data[`c${c}`] = { ...lat.data, ...calls };
  }
  for (const per of [16, 24]) {
    const inFlight = 2 * per;
    const key = (await alternate(ctx, gatewayVias, 1, { ...base, k: 1, spec: { concurrency: 1, durationMs: 200 } })).gateway!.key;
    const before = await limiterCalls(ctx, key);
    const load = loadavg()[0]!;
    const t = await alternate(ctx, vias, 2, { ...base, k: 2, spec: { concurrency: per, durationMs: slice } });
    const after = await limiterCalls(ctx, key);
    const put = throughputRows(scenario, inFlight, (load + loadavg()[0]!) / 2, t, gateways);
    const cpu = cpuRows(scenario, inFlight, t, gateways);
    rows.push(...put.rows, ...cpu.rows);
    const calls = callsPer(before, after);
    rows.push(goal({ scenario, metric: `object calls per proxied request at ${inFlight} in flight (limiter's own count; ops carried)`, baseline: "1.05 to 1.18 before tickets", value: calls ? `${calls.calls.toFixed(2)} (${calls.ops.toFixed(2)} ops)` : "?" }, "<= 0.5", calls !== null && calls.calls <= 0.5));
    data[`throughput${inFlight}`] = { ...put.data, ratio: put.data[`${gateways[0]!.name} ratio`], cpuMsAnAnswer: cpu.data, ...calls };
  }
  rows.push(await busyQueue(ctx, scenario, slice, data));
  return { rows, data };
}

/**
 * Calls into a key's object per request while its queue is busy: the key held at 4 in flight,
 * 2 x 16 asking, answers of 20 ms. A queued request's grant used to be a second call (`acquire`
 * on its place); it comes down a stream the first call returned, so each request is one call,
 * and its release rides the calls of the others or one of its own.
 */
async function busyQueue(ctx: Ctx, scenario: string, slice: number, data: Record<string, unknown>): Promise<Row> {
  configure(ctx, { latencyMs: 20 });
  const base = { apiKey: "sk-bench-busy-queue", maxTokens: 16 };
  const key = (await alternate(ctx, ["gateway"], 1, { ...base, k: 1, spec: { concurrency: 1, durationMs: 200 } })).gateway!.key;
  if (key) await setLimit(ctx, key, 4);
  const before = await limiterCalls(ctx, key);
  await alternate(ctx, ["gateway"], 1, { ...base, k: 2, spec: { concurrency: 16, durationMs: slice } });
  const after = await limiterCalls(ctx, key);
  const calls = callsPer(before, after);
  data.busyQueue = calls;
  return goal({ scenario, metric: "object calls per proxied request, a busy queue (4 in flight, 2 x 16 asking, 20 ms answers)", baseline: "about 2 (exchange, then acquire on the place)", value: calls ? `${calls.calls.toFixed(2)} (${calls.ops.toFixed(2)} ops)` : "?" }, "<= 1.1", calls !== null && calls.calls <= 1.1);
}

type Counted = Awaited<ReturnType<typeof limiterCalls>>;

/** Calls into a key's object, and the ops they carried, per proxied request between two readings of its counters. */
function callsPer(before: Counted, after: Counted): { calls: number; ops: number } | null {
  if (!before || !after) return null;
  const n = after.requests - before.requests;
  return { calls: share(after.calls - before.calls, n), ops: share(after.ops - before.ops, n) };
}

/** Holds a key's limiter at `n` in flight (its bounds and its limit), through the admin API. */
async function setLimit(ctx: Ctx, key: string, n: number): Promise<void> {
  await fetch(`${ctx.gateway.url}/admin/keys/${encodeURIComponent(key)}/config`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ctx.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ minConcurrency: n, maxConcurrency: n, limit: n }),
  });
}

export const overhead: Scenario = { name: "overhead", passthrough: true, beside: true, run };
