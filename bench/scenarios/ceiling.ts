// One key's ceiling. (1) Through wrangler dev: stand-in at latency 0 and no limits, plain-fetch
// clients at 2 x 32 in flight on one key, beside the plain Worker under the same load; the limiter's
// own request count confirms the figure. On this machine it is bounded by the CPU that workerd,
// the stand-in and the clients share. (2) The Limiter object by RPC inside workerd, no HTTP in
// front (bench/workerd/permits.run.ts under vitest): three calls per permit, one call per permit
// as a busy isolate's channel sends them, batches of 16, and one session per permit (what a request
// pays while its key's queue is busy). (3) The pure core in process
// (bench/core.ts under tsx), by queue depth.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { configure, type Ctx, limiterState, MODEL, type Scenario } from "../context.ts";
import { goal, perSec, type Row, share, times } from "../stats.ts";
import { alternate } from "./overhead.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const TARGET = 2_000;

type Permits = { perSec: number; permits: number };
type WorkerdResult = { loops: number; batch: number; single: Permits; paired: Permits; batched: Permits; sessioned: Permits };

/** The object by RPC inside workerd: runs the vitest file and reads its one PERMITS line. */
async function workerd(quick: boolean): Promise<WorkerdResult | string> {
  try {
    const { stdout } = await promisify(execFile)("npx", ["vitest", "run", "--config", "bench/vitest.workerd.config.ts", "bench/workerd/permits.run.ts"], {
      cwd: ROOT,
      env: { ...process.env, PERMITS_MS: quick ? "1000" : "3000" },
      maxBuffer: 16 * 1024 * 1024,
    });
    const line = stdout.split("\n").find((l) => l.includes("PERMITS {"));
    return line ? (JSON.parse(line.slice(line.indexOf("{"))) as WorkerdResult) : "no PERMITS line in vitest's output";
  } catch (err) {
    return `vitest failed: ${String(err).split("\n")[0]}`;
  }
}

type CoreResult = { limit: number; results: { depth: number; permitsPerSec: number }[] };

async function core(quick: boolean): Promise<CoreResult | string> {
  if (!existsSync(resolve(ROOT, "node_modules/.bin/tsx"))) return "tsx is not installed (node_modules/.bin/tsx)";
  const { stdout } = await promisify(execFile)("npx", ["tsx", "bench/core.ts", ...(quick ? ["--quick"] : [])], { cwd: ROOT });
  return JSON.parse(stdout.trim().split("\n").pop()!) as CoreResult;
}

async function run(ctx: Ctx) {
  configure(ctx, {});
  const apiKey = "sk-bench-ceiling";
  const spec = { concurrency: 32, durationMs: ctx.opts.quick ? 1_500 : 4_000, raw: true };
  const r = await alternate(ctx, ["passthrough", "gateway"], 2, { apiKey, maxTokens: 16, k: 2, spec });
  const [pt, gw] = [share(r.passthrough!.ok, r.passthrough!.seconds), share(r.gateway!.ok, r.gateway!.seconds)];
  const probe = await fetch(`${ctx.gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "hi" }], max_tokens: 1 }),
  });
  await probe.arrayBuffer();
  const state = await limiterState(ctx, probe.headers.get("x-slotgate-key"));
  const scenario = "one key's ceiling";
  const rows: Row[] = [
    goal({ scenario, metric: "permits/s via wrangler dev, 2x32 raw clients (plain Worker beside)", baseline: perSec(pt), value: `${perSec(gw)} = ${times(share(gw, pt))}` }, ">= 0.9x the plain Worker", share(gw, pt) >= 0.9),
    { scenario, metric: "limiter's own count / answers seen", baseline: "n/a", value: `${state?.metrics.totalRequests ?? "?"} / ${r.gateway!.ok + 1}, limit ${state?.concurrency.limit ?? "?"}` },
  ];
  const w = await workerd(ctx.opts.quick);
  if (typeof w === "string") rows.push({ scenario, metric: "Limiter object by RPC inside workerd", baseline: "n/a", value: `skipped: ${w}` });
  else {
    const by = `${w.loops} callers`;
    rows.push({ scenario, metric: `Limiter object by RPC in workerd, 3 calls a permit (before batching), ${by}`, baseline: "n/a", value: perSec(w.single.perSec) });
    rows.push(goal({ scenario, metric: `Limiter object by RPC in workerd, 1 call a permit (acquire + the last answer's settle-and-release), ${by}`, baseline: perSec(w.single.perSec), value: perSec(w.paired.perSec) }, `>= ${perSec(TARGET)}`, w.paired.perSec >= TARGET));
    rows.push(goal({ scenario, metric: `Limiter object by RPC in workerd, batches of ${w.batch}, ${by}`, baseline: perSec(w.single.perSec), value: perSec(w.batched.perSec) }, `>= ${perSec(TARGET)}`, w.batched.perSec >= TARGET));
    // No target: a session is one call where a busy key's channel would make three, and its streams cost the isolate's CPU (BENCHMARKS.md).
    rows.push({ scenario, metric: `Limiter object by RPC in workerd, 1 session a permit (acquire on the call, settle-and-release on its stream), ${by}`, baseline: perSec(w.single.perSec), value: `${perSec(w.sessioned.perSec)} = ${times(share(w.sessioned.perSec, w.paired.perSec))} of 1 call a permit` });
  }
  const c = await core(ctx.opts.quick);
  if (typeof c === "string") rows.push({ scenario, metric: "LimiterCore in process", baseline: "n/a", value: `skipped: ${c}` });
  else
    for (const { depth, permitsPerSec } of c.results)
      rows.push({ scenario, metric: `LimiterCore in process, ${c.limit} held, ${depth} queued`, baseline: "n/a", value: perSec(permitsPerSec) });
  return { rows, data: { wrangler: { passthrough: pt, gateway: gw, limiter: state }, workerd: w, core: c } };
}

export const ceiling: Scenario = { name: "ceiling", passthrough: true, run };
