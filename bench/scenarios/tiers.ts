// Service tiers (issue 35): one job of chat lines (gpt-5-mini, a flex model) by `slotgate batch`
// through the gateway with virtual keys of one pool member (one key): with `--mode flex` while the
// stand-in sheds 30% of flex attempts (OpenAI's own 429), at standard, and with flex fully shed, the
// last two each with an interactive caller of the same key beside it. Side by side: what the ledger says each job cost,
// the wall times, the key's limiter before and after the refusal storm, the interactive caller's
// latency alone and beside the storm, and the ledger's cost per tier against the stand-in's charge.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LimiterSnapshot } from "../../src/limiter/types.ts";
import { Admin, poolVars } from "../../test/support/pools.ts";
import type { Stats } from "../../test/support/standin/index.ts";
import { configure, type Ctx, limiterState, PROMPT, type Scenario } from "../context.ts";
import { goal, ms, secs, spread, times, type Row } from "../stats.ts";
import { slotgate, spent } from "./batch.ts";

const RUN = randomBytes(4).toString("hex");
const KEY = `sk-bench-tiers-${RUN}`;
const POOL = "bench-tiers";
const MODEL = "gpt-5-mini";
/** The built-in price of gpt-5-mini (src/usage/prices.ts); the stand-in charges the same list, flex at half (OpenAI's Batch API price). */
const PRICES = { [MODEL]: { input: 0.25, output: 2 } };
const TIERS = ["flex", "standard", "priority"] as const;
type Tier = (typeof TIERS)[number];

const vars = () => poolVars({ [POOL]: { provider: "openai", members: [{ name: "tiers", secret: "BENCH_TIERS_KEY" }] } }, { BENCH_TIERS_KEY: KEY });

/** The ledger's cost and answers per tier, summed over rows since `since`. */
async function ledgerByTier(admin: Admin, since: number): Promise<Record<Tier, { requests: number; costUsd: number }>> {
  const res = await admin.fetch("GET", `/admin/usage?by=tier&since=${since}`);
  const rows = ((await res.json()) as { rows: { tier: string | null; requests: number; costUsd: number }[] }).rows;
  const out = Object.fromEntries(TIERS.map((t) => [t, { requests: 0, costUsd: 0 }])) as Record<Tier, { requests: number; costUsd: number }>;
  for (const r of rows) if (r.tier && r.tier in out) (out[r.tier as Tier].requests += r.requests), (out[r.tier as Tier].costUsd += r.costUsd);
  return out;
}

/** The stand-in's answers and charge per tier, summed over the snapshots of each run (its stats are reset per run). */
function add(total: Stats["tiers"] | null, s: Stats["tiers"]): Stats["tiers"] {
  if (!total) return structuredClone(s);
  for (const t of TIERS) for (const k of ["answers", "shed", "input", "output", "usd"] as const) total[t][k] += s[t][k];
  return total;
}

/** An interactive caller of the same key: `n` plain chat calls at standard, `concurrency` at once; each call's latency. */
async function interactive(ctx: Ctx, vk: string, n: number, concurrency: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const body = JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: PROMPT }] });
  const one = async () => {
    while (next < n) {
      next += 1;
      const t = performance.now();
      const res = await fetch(`${ctx.gateway.url}/openai/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${vk}`, "content-type": "application/json", "x-slotgate-priority": "normal" }, body });
      await res.arrayBuffer();
      if (res.ok) latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, one));
  return latencies;
}

const cutsOf = (s: LimiterSnapshot | null) => s?.history.filter((h) => h.reason === "rate_limit" || h.reason === "quota").length ?? 0;

async function run(ctx: Ctx) {
  const lines = ctx.opts.quick ? 400 : 2_000;
  const shedShare = 0.3;
  configure(ctx, { latencyMs: 100, flexShed: shedShare, prices: PRICES });
  const admin = new Admin(ctx.gateway.url, ctx.adminToken);
  const mint = async (label: string) => {
    const res = await admin.fetch("POST", "/admin/virtual-keys", { name: `bench-tiers-${RUN}-${label}`, pool: POOL });
    return (await res.json()) as { name: string; key: string };
  };
  const dir = mkdtempSync(join(tmpdir(), "slotgate-bench-tiers-"));
  try {
    const input = join(dir, "job.jsonl");
    const body = (i: number) => ({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: `${PROMPT} (${i})` }] });
    writeFileSync(input, Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `job-${i}`, method: "POST", url: "/v1/chat/completions", body: body(i) })).join("\n") + "\n");
    const common = ["--gateway", ctx.gateway.url, "--concurrency", "32"];
    const answered = (f: string) => new Set(readFileSync(join(dir, f), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)).size;
    // The ledger's rows before this scenario's: its own are the difference.
    const since = Date.now() - 3_600_000;
    const before = await ledgerByTier(admin, since);
    let charged: Stats["tiers"] | null = null;
    const caller = await mint("interactive");
    const calls = lines / 10;
    /** One job by `slotgate batch`, the interactive caller beside it when asked. */
    const job = async (label: string, out: string, extra: string[], beside = false) => {
      const vk = await mint(label);
      ctx.standin.resetStats();
      const [wallMs, latencies] = await Promise.all([
        slotgate([input, "--out", join(dir, out), ...common, ...extra], vk.key),
        beside ? interactive(ctx, caller.key, calls, 8) : Promise.resolve([]),
      ]);
      const st = ctx.standin.stats();
      charged = add(charged, st.tiers);
      return { vk, wallMs, st, latencies };
    };

    ctx.standin.resetStats();
    const alone = spread(await interactive(ctx, caller.key, calls, 8));
    charged = add(charged, ctx.standin.stats().tiers);
    // The flex job first: the key's limit has grown by the time the jobs compared for time run.
    const flex = await job("flex", "flex.jsonl", ["--mode", "flex"]);
    // The key the pool's member calls with (a virtual key's answers name the virtual key's own, not the member's).
    const listed = (await (await admin.fetch("GET", "/admin/keys")).json()) as { keys: { key: string; model: string; member: { pool: string } | null }[] };
    const key = listed.keys.find((k) => k.member?.pool === POOL && k.model === MODEL)?.key ?? null;
    const limitBefore = await limiterState(ctx, key);
    // Flex shed whole from here. The standard job and the flex job beside the interactive caller, in
    // turn, three times: the machine's load drifts (one job's time varied by 15% from run to run on the
    // loaded machine), and the two are compared side by side, summed.
    ctx.standin.configure({ flexShed: 1 });
    const runs: { standard: Awaited<ReturnType<typeof job>>; storm: Awaited<ReturnType<typeof job>> }[] = [];
    for (const round of [1, 2, 3]) {
      const standardRun = await job(`standard-${round}`, `standard-${round}.jsonl`, [], true);
      runs.push({ standard: standardRun, storm: await job(`storm-${round}`, `shed-${round}.jsonl`, ["--mode", "flex"], true) });
    }
    const limitAfter = await limiterState(ctx, key);
    const standard = { vk: runs[0]!.standard.vk, wallMs: runs.reduce((a, r) => a + r.standard.wallMs, 0), p50: spread(runs.flatMap((r) => r.standard.latencies)).p50 };
    const storm = {
      wallMs: runs.reduce((a, r) => a + r.storm.wallMs, 0), p50: spread(runs.flatMap((r) => r.storm.latencies)).p50,
      shed: runs.reduce((a, r) => a + r.storm.st.tiers.flex.shed, 0), tiers: runs.map((r) => r.storm.st.tiers),
    };

    const std = await spent(admin, standard.vk.name, "sync", lines);
    const fx = await spent(admin, flex.vk.name, "sync", lines);
    const ratio = fx.costUsd / std.costUsd;
    // The ledger per tier, once it holds every answer the stand-in served in these runs.
    const served = charged!.flex.answers + charged!.standard.answers + charged!.priority.answers;
    let after = await ledgerByTier(admin, since);
    const mine = (t: Tier) => ({ requests: after[t].requests - before[t].requests, costUsd: after[t].costUsd - before[t].costUsd });
    for (let i = 0; i < 300 && TIERS.reduce((a, t) => a + mine(t).requests, 0) < served; i++) {
      await new Promise((r) => setTimeout(r, 200));
      after = await ledgerByTier(admin, since);
    }
    const diff = Math.max(...TIERS.map((t) => Math.abs(mine(t).costUsd - charged![t].usd)));

    const scenario = `service tiers, ${lines} lines of ${MODEL} through the gateway, one key`;
    const fmt = (t: Tier) => `${t} $${mine(t).costUsd.toFixed(6)} (${mine(t).requests})`;
    const limit = (s: LimiterSnapshot | null) => (s ? `limit ${s.concurrency.limit}, ${cutsOf(s)} cuts, ${s.cooldownUntil ? "gate shut" : "gate open"}` : "unavailable");
    const rows: Row[] = [
      goal(
        { scenario, metric: `cost in the ledger: standard job | --mode flex, ${shedShare * 100}% of flex attempts shed`, baseline: `$${std.costUsd.toFixed(5)}`, value: `$${fx.costUsd.toFixed(5)} (${times(ratio)}; ${flex.st.tiers.flex.shed} shed, ${flex.st.tiers.standard.answers} lines at standard)` },
        "<= 0.52x", ratio <= 0.52,
      ),
      goal(
        { scenario, metric: "lines answered, once | generations", baseline: `${answered("standard-1.jsonl")} / ${lines}`, value: `${answered("flex.jsonl")} / ${lines}; ${flex.st.successes}` },
        "every line once, generated once", answered("flex.jsonl") === lines && flex.st.successes === lines,
      ),
      { scenario, metric: "wall time: standard (the first of three, beside the interactive caller) | --mode flex (30% shed, alone)", baseline: secs(runs[0]!.standard.wallMs), value: secs(flex.wallMs) },
      goal(
        {
          scenario, metric: "flex fully shed: wall time standard | --mode flex (three of each in turn, beside the interactive caller)",
          baseline: `${secs(standard.wallMs)} (${runs.map((r) => secs(r.standard.wallMs)).join(" + ")})`,
          value: `${secs(storm.wallMs)} (${runs.map((r) => secs(r.storm.wallMs)).join(" + ")}; ${times(storm.wallMs / standard.wallMs)}; ${storm.shed} refusals; lines answered: ${runs.map((_, i) => answered(`shed-${i + 1}.jsonl`)).join(", ")})`,
        },
        "<= 1.1x, every line", storm.wallMs <= 1.1 * standard.wallMs && runs.every((_, i) => answered(`shed-${i + 1}.jsonl`) === lines),
      ),
      goal(
        { scenario, metric: "the key's limiter before | after the refusal storm", baseline: limit(limitBefore), value: limit(limitAfter) },
        "no cut, limit not lower, gate open", limitBefore !== null && limitAfter !== null && cutsOf(limitAfter) === cutsOf(limitBefore) && limitAfter.concurrency.limit >= limitBefore.concurrency.limit && !limitAfter.cooldownUntil,
      ),
      goal(
        { scenario, metric: `the same key's interactive caller (${calls} calls a run, 8 at once, normal lane), p50: beside the standard jobs | beside the storms`, baseline: `${ms(standard.p50)} (alone ${ms(alone.p50)})`, value: `${ms(storm.p50)} (${times(storm.p50 / standard.p50)})` },
        "<= 1.2x (no slowdown beyond its share)", storm.p50 <= 1.2 * standard.p50,
      ),
      goal(
        { scenario, metric: "cost per tier: stand-in's charge | the ledger", baseline: TIERS.filter((t) => charged![t].answers).map((t) => `${t} $${charged![t].usd.toFixed(6)} (${charged![t].answers})`).join(", "), value: TIERS.filter((t) => mine(t).requests).map(fmt).join(", ") },
        "equal (to 1e-9 USD)", diff <= 1e-9 && TIERS.every((t) => mine(t).requests === charged![t].answers),
      ),
    ];
    return {
      rows,
      data: {
        lines, shedShare, standard: { wallMs: standard.wallMs, cost: std, p50: standard.p50 }, flex: { wallMs: flex.wallMs, cost: fx, tiers: flex.st.tiers }, ratio,
        runs: runs.map((r) => ({ standardMs: r.standard.wallMs, stormMs: r.storm.wallMs })), storm, alone, limitBefore, limitAfter, charged, ledger: Object.fromEntries(TIERS.map((t) => [t, mine(t)])), diff,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const tiers: Scenario = { name: "tiers", vars, run };
