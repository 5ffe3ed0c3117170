// Provider batches (issue 27): one job of chat lines run twice through the gateway with a virtual
// key, by `slotgate batch` (a child process, as a user runs it): synchronously, and with
// `--mode provider` against the stand-in's batch API (its turnaround a few seconds, 1% of lines
// failing in their batch and falling back). Side by side: what the ledger says each cost, and
// the wall time. Target: the batch run costs at most half, plus what its fallback lines cost in full.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Admin, poolVars } from "../../test/support/pools.ts";
import { configure, type Ctx, MODEL, PROMPT, type Scenario } from "../context.ts";
import { goal, secs, times, type Row } from "../stats.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const RUN = randomBytes(4).toString("hex");
const KEY = `sk-bench-batch-${RUN}`;
const POOL = "bench-batch";

const vars = () => ({ ...poolVars({ [POOL]: { provider: "openai", members: [{ name: "batch", secret: "BENCH_BATCH_KEY" }] } }, { BENCH_BATCH_KEY: KEY }) });

/** `slotgate batch` as a child process; resolves with its wall time once it has exited 0. */
export function slotgate(args: string[], apiKey: string): Promise<number> {
  const started = Date.now();
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/slotgate.mjs"), "batch", ...args], { cwd: ROOT, env: { ...process.env, OPENAI_API_KEY: apiKey }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b));
    child.stderr.on("data", (b: Buffer) => (out += b));
    child.once("exit", (code) => (code === 0 ? ok(Date.now() - started) : fail(new Error(`slotgate batch ${args.join(" ")} exited ${code}:\n${out.slice(-2_000)}`))));
  });
}

export interface Spent {
  requests: number;
  costUsd: number;
}

/** The ledger's rows of one virtual key in one mode, summed; waits until they hold `requests` answers (the ledger lags by USAGE_FLUSH_MS). */
export async function spent(admin: Admin, vk: string, mode: "sync" | "batch", requests: number): Promise<Spent> {
  let got: Spent = { requests: 0, costUsd: 0 };
  for (let i = 0; i < 300 && got.requests < requests; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 200));
    const res = await admin.fetch("GET", `/admin/usage?by=virtualKey&mode=${mode}&since=${Date.now() - 3_600_000}`);
    const rows = ((await res.json()) as { rows: ({ virtualKey: string } & Spent)[] }).rows.filter((r) => r.virtualKey === vk);
    got = rows.reduce((a, r) => ({ requests: a.requests + r.requests, costUsd: a.costUsd + r.costUsd }), { requests: 0, costUsd: 0 });
  }
  return got;
}

async function run(ctx: Ctx) {
  const lines = ctx.opts.quick ? 400 : 2_000;
  const turnaroundMs = ctx.opts.quick ? 2_000 : 5_000;
  const failRate = 0.01;
  configure(ctx, { latencyMs: 100, batchTurnaroundMs: turnaroundMs, batchValidatingMs: 200, batchFinalizingMs: 200, batchFailRate: failRate, batchEnqueuedTokens: 0 });
  const admin = new Admin(ctx.gateway.url, ctx.adminToken);
  const mint = async (scopes: string[]) => {
    const res = await admin.fetch("POST", "/admin/virtual-keys", { name: `bench-batch-${RUN}-${scopes.length}`, pool: POOL, scopes });
    return (await res.json()) as { name: string; key: string };
  };
  const dir = mkdtempSync(join(tmpdir(), "slotgate-bench-batch-"));
  try {
    const input = join(dir, "job.jsonl");
    const body = (i: number) => ({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: `${PROMPT} (${i})` }] });
    writeFileSync(input, Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `job-${i}`, method: "POST", url: "/v1/chat/completions", body: body(i) })).join("\n") + "\n");
    const common = ["--gateway", ctx.gateway.url, "--concurrency", "32"];

    const syncKey = await mint(["inference"]);
    const syncMs = await slotgate([input, "--out", join(dir, "sync.jsonl"), ...common], syncKey.key);
    const batchKey = await mint(["inference", "batches"]);
    ctx.standin.resetStats();
    const batchMs = await slotgate([input, "--out", join(dir, "batch.jsonl"), ...common, "--mode", "provider", "--poll", "1"], batchKey.key);
    const st = ctx.standin.stats();
    const fellBack = st.batch.failedLines + st.batch.expiredLines + st.batch.cancelledLines;
    const answered = (f: string) => new Set(readFileSync(join(dir, f), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { custom_id: string }).custom_id)).size;

    const sync = await spent(admin, syncKey.name, "sync", lines);
    const byBatch = await spent(admin, batchKey.name, "batch", st.batch.generations);
    const fallback = await spent(admin, batchKey.name, "sync", fellBack);
    const ratio = (byBatch.costUsd + fallback.costUsd) / sync.costUsd;
    const allowed = 0.5 + (0.5 * fellBack) / lines;
    const scenario = `provider batch, ${lines} lines, turnaround ${secs(turnaroundMs)}, ${failRate * 100}% failing in their batch`;
    const rows: Row[] = [
      goal(
        { scenario, metric: "cost in the ledger: sync | batch (batch rows + fallback rows)", baseline: `$${sync.costUsd.toFixed(5)}`, value: `$${(byBatch.costUsd + fallback.costUsd).toFixed(5)} = $${byBatch.costUsd.toFixed(5)} + $${fallback.costUsd.toFixed(5)} (${times(ratio)})` },
        `<= ${times(allowed)} (0.5x + ${fellBack} fallback lines)`, ratio <= allowed + 1e-9,
      ),
      { scenario, metric: "wall time: sync | batch", baseline: secs(syncMs), value: secs(batchMs) },
      goal(
        { scenario, metric: "lines answered, once | generations (batch + fallback)", baseline: `${answered("sync.jsonl")} / ${lines}`, value: `${answered("batch.jsonl")} / ${lines}; ${st.batch.generations} + ${fellBack}` },
        "every line once, generated once", answered("batch.jsonl") === lines && st.batch.generations + fellBack === lines,
      ),
    ];
    return { rows, data: { lines, turnaroundMs, syncMs, batchMs, sync, byBatch, fallback, ratio, allowed, fellBack, standin: st.batch } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const batch: Scenario = { name: "batch", vars, run };
