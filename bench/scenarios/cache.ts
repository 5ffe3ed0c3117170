// The response cache (x-slotgate-cache: on), through wrangler dev:
// - re-run: a 4-process x 50-request eval (each request its own prompt, 4 in flight per process, as
//   promptfoo's default) run twice; the second run's upstream calls and its makespan against the first's;
// - hit latency: hits at 16 (and 1) in flight beside the plain Worker answering from memory (same client, raw fetch);
// - collapsing: 16 identical requests at once, all misses: upstream calls.
import type { CacheStats } from "../../src/cache/stats.ts";
import type { ClientSpec } from "../client.ts";
import { baseURL, configure, type Ctx, MODEL, PROMPT, type Scenario } from "../context.ts";
import { runFleets } from "../fleet.ts";
import { goal, ms, pct, type Row, share, spread } from "../stats.ts";
import { alternate } from "./overhead.ts";

const scenario = "cache (x-slotgate-cache: on)";
const LATENCY_MS = 1_000;

const cacheHeaders = (ns: string) => ({ "x-slotgate-cache": "on", "x-slotgate-cache-namespace": ns });

async function cacheStats(ctx: Ctx): Promise<CacheStats | null> {
  const res = await fetch(`${ctx.gateway.url}/admin/cache`, { headers: { authorization: `Bearer ${ctx.adminToken}` } });
  return res.ok ? ((await res.json()) as CacheStats) : null;
}

/** Entries are written once each answer has gone out: wait until the namespace holds `n`. */
async function storedAll(ctx: Ctx, ns: string, n: number): Promise<number> {
  const end = Date.now() + 30_000;
  for (;;) {
    const got = (await cacheStats(ctx))?.namespaces.find((x) => x.namespace === ns)?.entries ?? 0;
    if (got >= n || Date.now() > end) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One eval: `processes` client processes, each `requests` distinct items, run together; the stand-in's count of calls for it. */
async function evalRun(ctx: Ctx, apiKey: string, ns: string, processes: number, requests: number, concurrency: number, via: "gateway" | "memory" = "gateway") {
  const spec = (i: number): ClientSpec => ({
    baseURL: baseURL(ctx, via), apiKey, model: MODEL, requests, concurrency, maxRetries: 0, maxTokens: 16,
    prompt: PROMPT, headers: cacheHeaders(ns), vary: `p${i}`,
  });
  const fleets = await runFleets(Array.from({ length: processes }, (_, i) => ({ k: 1, spec: spec(i) })), async () => ctx.standin.resetStats());
  const start = Math.min(...fleets.map((f) => f.end - f.makespan));
  return {
    makespan: Math.max(...fleets.map((f) => f.end)) - start,
    ok: fleets.reduce((a, f) => a + f.ok, 0),
    requests: fleets.reduce((a, f) => a + f.requests, 0),
    upstream: ctx.standin.stats().attempts,
  };
}

async function run(ctx: Ctx) {
  const rows: Row[] = [];
  const data: Record<string, unknown> = {};
  const tag = Date.now().toString(36);

  // Re-run of an eval.
  configure(ctx, { latencyMs: LATENCY_MS, jitterMs: 200 });
  const [processes, requests, perProcess] = ctx.opts.quick ? [2, 10, 4] : [4, 50, 4];
  const ns = `bench-rerun-${tag}`;
  const apiKey = `sk-bench-cache-${tag}`;
  const first = await evalRun(ctx, apiKey, ns, processes, requests, perProcess);
  const entries = await storedAll(ctx, ns, first.requests);
  const second = await evalRun(ctx, apiKey, ns, processes, requests, perProcess);
  const floor = await evalRun(ctx, apiKey, ns, processes, requests, perProcess, "memory");
  const ratio = share(second.makespan, first.makespan);
  const shape = `${processes} processes x ${requests} requests, ${perProcess} in flight each, stand-in ${LATENCY_MS} ms`;
  rows.push({ scenario, metric: `re-run (${shape}): answered, first / second run`, baseline: `${first.ok}/${first.requests}`, value: `${second.ok}/${second.requests}` });
  rows.push(goal({ scenario, metric: `re-run: upstream calls, first / second run (${entries} entries stored)`, baseline: String(first.upstream), value: String(second.upstream) }, "second: 0", second.upstream === 0 && second.ok === second.requests));
  rows.push(goal({ scenario, metric: `re-run: makespan, first / second run (the same eval against a plain Worker answering from memory: ${ms(floor.makespan)} = ${pct(share(floor.makespan, first.makespan))})`, baseline: ms(first.makespan), value: `${ms(second.makespan)} = ${pct(ratio)}` }, "<= 5%", ratio <= 0.05));
  data.rerun = { first, second, floor, entries, ratio };

  // Hit latency at 16 in flight, beside a plain Worker answering from memory.
  configure(ctx, {});
  const hitNs = `bench-hits-${tag}`;
  const hitKey = `sk-bench-hits-${tag}`;
  const slice = ctx.opts.quick ? 1_000 : 3_000;
  const spec = { apiKey: hitKey, maxTokens: 16, k: 1, spec: { concurrency: 16, durationMs: 300, raw: true, headers: cacheHeaders(hitNs) } };
  await alternate(ctx, ["gateway"], 1, { ...spec, spec: { ...spec.spec, concurrency: 1, durationMs: 0, requests: 1 } as Partial<ClientSpec> });
  await storedAll(ctx, hitNs, 1);
  await alternate(ctx, ["memory", "gateway"], 1, spec); // warm both
  const before = ctx.standin.stats().attempts;
  ctx.standin.resetStats();
  const lat = await alternate(ctx, ["memory", "gateway"], 3, { ...spec, spec: { ...spec.spec, durationMs: slice } });
  const one = await alternate(ctx, ["memory", "gateway"], 3, { ...spec, spec: { ...spec.spec, concurrency: 1, durationMs: slice } });
  const upstreamDuringHits = ctx.standin.stats().attempts;
  const [mem, hit] = [spread(lat.memory!.latency), spread(lat.gateway!.latency)];
  const [mem1, hit1] = [spread(one.memory!.latency), spread(one.gateway!.latency)];
  const added = hit.p50 - mem.p50;
  rows.push(goal({ scenario, metric: `hit p50 / p99 at 16 in flight (plain Worker answering from memory; ${hit.n} hits, ${upstreamDuringHits} upstream calls in all hit runs)`, baseline: `${ms(mem.p50)} / ${ms(mem.p99)}`, value: `${ms(hit.p50)} / ${ms(hit.p99)} (p50 +${ms(added)})` }, "p50 <= +5 ms", added <= 5 && upstreamDuringHits === 0));
  rows.push({ scenario, metric: `hit p50 / p99 at 1 in flight (plain Worker answering from memory; ${hit1.n} hits)`, baseline: `${ms(mem1.p50)} / ${ms(mem1.p99)}`, value: `${ms(hit1.p50)} / ${ms(hit1.p99)} (p50 +${ms(hit1.p50 - mem1.p50)})` });
  data.hits = { memory: mem, gateway: hit, added, one: { memory: mem1, gateway: hit1 }, upstreamDuringHits, warmUpstream: before };

  // Collapsing: 16 identical misses at once.
  configure(ctx, { latencyMs: LATENCY_MS, jitterMs: 0 });
  const colNs = `bench-collapse-${tag}`;
  const fleets = await runFleets([{ k: 1, spec: {
    baseURL: baseURL(ctx, "gateway"), apiKey: `sk-bench-collapse-${tag}`, model: MODEL, requests: 16, concurrency: 16, maxRetries: 0,
    maxTokens: 16, prompt: PROMPT, raw: true, headers: cacheHeaders(colNs),
  } }], async () => ctx.standin.resetStats());
  const calls = ctx.standin.stats().attempts;
  rows.push(goal({ scenario, metric: "collapsing: 16 identical requests at once, all misses: answered, upstream calls", baseline: "16 calls without collapsing", value: `${fleets[0]!.ok}/16, ${calls} call${calls === 1 ? "" : "s"}` }, "1 call", calls === 1 && fleets[0]!.ok === 16));
  data.collapse = { ok: fleets[0]!.ok, calls, makespan: fleets[0]!.makespan };
  data.stats = await cacheStats(ctx);
  return { rows, data };
}

export const cache: Scenario = { name: "cache", passthrough: true, run };
