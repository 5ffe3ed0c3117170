// npm run bench [-- --quick] [--k N] [--m N] [--concurrency N] [--only shared,cap,real,pools,...] [--pool-seconds N] [--against REV|DIR] [--probe] [--verbose]
// (or BENCH_QUICK=1, BENCH_K, BENCH_M, BENCH_CONCURRENCY, BENCH_SCENARIOS). One stand-in provider
// in this process, one gateway under wrangler dev from a snapshot of the tree (plus a plain Worker
// when a scenario needs it), K client processes per run. Prints a markdown table and writes bench/results.json.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Gateway, type GatewayOptions, startGateway } from "../test/support/gateway.ts";
import { gatewayProviders, type Standin, startStandin } from "../test/support/standin/index.ts";
import type { BenchOptions, Beside, Ctx, Scenario } from "./context.ts";
import { besideTrees, here, type Tree } from "./trees.ts";
import { batch } from "./scenarios/batch.ts";
import { bedrock } from "./scenarios/bedrock.ts";
import { cache } from "./scenarios/cache.ts";
import { cap } from "./scenarios/cap.ts";
import { ceiling } from "./scenarios/ceiling.ts";
import { fair } from "./scenarios/fair.ts";
import { hotpath } from "./scenarios/hotpath.ts";
import { faults } from "./scenarios/faults.ts";
import { overhead } from "./scenarios/overhead.ts";
import { pools } from "./scenarios/pools.ts";
import { providers } from "./scenarios/providers.ts";
import { real } from "./scenarios/real.ts";
import { type MatrixLine, matrixTable } from "./real/report.ts";
import { shared } from "./scenarios/shared.ts";
import { tierRounds } from "./scenarios/tier-rounds.ts";
import { tiers } from "./scenarios/tiers.ts";
import { tokens } from "./scenarios/tokens.ts";
import { vertex } from "./scenarios/vertex.ts";
import type { Row } from "./stats.ts";

const ALL: Scenario[] = [shared, cap, tokens, faults, overhead, hotpath, ceiling, fair, cache, ...real, ...pools, batch, providers, bedrock, vertex, tiers, tierRounds];
/** Names that select several scenarios. */
const GROUPS: Record<string, string[]> = { real: real.map((s) => s.name), pools: pools.map((s) => s.name) };
const ADMIN_TOKEN = "bench-admin-token";

interface Options {
  opts: BenchOptions;
  only: Scenario[];
  verbose: boolean;
  /** `--against`: other revisions or directories whose gateways run beside this tree's. */
  against: string[];
  /** `--probe`: beside each tree's gateway, its probe (bench/trees.ts). */
  probe: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      quick: { type: "boolean", default: process.env.BENCH_QUICK === "1" },
      k: { type: "string", default: process.env.BENCH_K },
      m: { type: "string", default: process.env.BENCH_M },
      concurrency: { type: "string", default: process.env.BENCH_CONCURRENCY },
      only: { type: "string", default: process.env.BENCH_SCENARIOS },
      "pool-seconds": { type: "string", default: process.env.BENCH_POOL_SECONDS },
      verbose: { type: "boolean", default: false },
      timeline: { type: "boolean", default: false },
      against: { type: "string", multiple: true, default: [] },
      probe: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(`npm run bench -- [--quick] [--k N] [--m N] [--concurrency N] [--only ${ALL.map((s) => s.name).join(",")},real] [--verbose]
  --quick        smoke run: K=2, M=16, concurrency 8, short runs (figures are not meant to meet targets)
  --only real    the real-client matrix (issue 17): every shape through wrangler dev with its real client
                 (openai SDK, @anthropic-ai/sdk, the Vercel AI SDK, the promptfoo CLI installed on first use
                 into ~/.cache/slotgate-bench), the simulator's figure beside each; one shape: --only real-cap.
                 Fleets are fixed per shape (--k/--m/--concurrency do not apply; --quick shrinks them)
  --only pools   key pools and virtual keys (issue 19): pools-share (600+600 and 900+300 RPM beside one key
                 of 1,200), pools-quota (a member without quota; --pool-seconds N, default 120, quick 20;
                 BENCH_POOL_SECONDS), pools-revoke, pools-overhead, clouds-pool (issue 41: one Claude model on an
                 Anthropic, a Bedrock and a Vertex member at 240+120+120 RPM, the Anthropic SDK with a virtual key,
                 against the ideal at the sum). Fleets fixed per row
  --only batch   provider batches (issue 27): one 2,000-line job (quick: 400) by slotgate batch through the
                 gateway, sync beside --mode provider: the ledger's cost and the wall time
  --only providers  every built-in beyond OpenAI and Anthropic at its limit in its own dialect (issue 32), its
                 users' client through wrangler dev (4 x 60 at 8, a quarter streamed), the simulator's figure beside
  --only bedrock Amazon Bedrock (issue 41): 4 callers (a virtual key each, the AWS SDK's Converse, a quarter
                 ConverseStream) on one IAM member the gateway signs for, 240 requests at a 120 RPM quota with
                 no headers (about a minute): time over the quota's ideal, upstream 429 share, the ledger against the stand-in;
                 then the same on a model whose quota PROVIDERS states (another minute): no 429 upstream at all
  --only tiers   service tiers (issue 35): one 2,000-line job (quick: 400) by slotgate batch through the gateway at
                 standard, --mode flex with 30% of flex shed, and flex fully shed beside an interactive caller
  --k N          client processes (default 8; BENCH_K)          --m N  requests per process (default 50; BENCH_M)
  --concurrency  in flight per process (default 16; BENCH_CONCURRENCY)
  --only LIST    scenarios to run (default all; BENCH_SCENARIOS)  --verbose  echo wrangler's output
  --against X    overhead: another tree's gateway in the same alternated rounds, X a revision (git archive
                 of it) or a directory (a worktree, as its files are now), e.g. --against b2ddb70; repeatable
  --probe        overhead: beside each tree's gateway, its probe (its acquires granted in the Worker, the
                 limiter never asked: bench/trees.ts), e.g. --only overhead --against b2ddb70 --probe
  --timeline     real-client shapes write bench/timeline-<shape>-<via>.json: each request and upstream attempt
                 (print the first seconds with: node bench/real/timeline.ts <file> [--until 2000])`);
    process.exit(0);
  }
  const quick = values.quick!;
  const int = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Math.max(1, Number.parseInt(v, 10) || fallback));
  const names = (values.only?.split(",").map((s) => s.trim()).filter(Boolean) ?? ALL.map((s) => s.name)).flatMap((n) => GROUPS[n] ?? [n]);
  const unknown = names.filter((n) => !ALL.some((s) => s.name === n));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(", ")}; choose from ${[...ALL.map((s) => s.name), ...Object.keys(GROUPS)].join(", ")}`);
  const poolSeconds = values["pool-seconds"] === undefined ? undefined : int(values["pool-seconds"], 120);
  const opts = { k: int(values.k, quick ? 2 : 8), m: int(values.m, quick ? 16 : 50), concurrency: int(values.concurrency, quick ? 8 : 16), quick, poolSeconds, timeline: values.timeline! };
  return { opts, only: ALL.filter((s) => names.includes(s.name)), verbose: values.verbose!, against: values.against!, probe: values.probe! };
}

/** The vars the selected scenarios need, their `POOLS` merged (each names pools of its own). */
function scenarioVars(only: Scenario[], standin: Standin): Record<string, string> {
  const each = only.map((s) => s.vars?.(standin) ?? {});
  const pools = Object.assign({}, ...each.map((v) => (v.POOLS ? JSON.parse(v.POOLS) : {})));
  return { ...Object.assign({}, ...each), ...(Object.keys(pools).length && { POOLS: JSON.stringify(pools) }) };
}

/** Ports are picked free and then bound by wrangler; another run on this machine can win the race. */
async function start(o: GatewayOptions): Promise<Gateway> {
  for (let attempt = 1; ; attempt++)
    try {
      return await startGateway(o);
    } catch (err) {
      if (attempt >= 3) throw err;
      console.error(`bench: wrangler dev did not start (${String(err).split("\n").find((l) => /ERROR|exited/.test(l))?.trim()}); again`);
    }
}

function table(rows: Row[]): string {
  const head = ["scenario", "metric", "baseline (direct SDK / plain Worker)", "Slotgate", "target", ""];
  const cells = rows.map((r, i) => [
    i > 0 && rows[i - 1]!.scenario === r.scenario ? "" : r.scenario,
    r.metric, r.baseline, r.value, r.target ?? "", r.pass === undefined ? "" : r.pass ? "pass" : "MISS",
  ]);
  const line = (c: string[]) => `| ${c.map((x) => x.replaceAll("|", "\\|")).join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...cells.map(line)].join("\n");
}

/** The commit measured, and whether src/ or wrangler.toml differed from it when the snapshot was taken. */
function commit(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: resolve(import.meta.dirname, ".."), encoding: "utf8" }).trim();
  try {
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--", "src", "wrangler.toml") ? " + uncommitted changes" : ""}`;
  } catch {
    return "unknown";
  }
}

const machine = () => ({
  cores: cpus().length,
  cpu: cpus()[0]?.model ?? "?",
  node: process.version,
  date: new Date().toISOString(),
  loadavg: loadavg().map((x) => x.toFixed(2)).join(" "),
});

/** The trees to run beside this one (`--against`, `--probe`), for the scenarios that compare them. */
function treesBeside(o: Options): Tree[] {
  if (!o.against.length && !o.probe) return [];
  if (!o.only.some((s) => s.beside)) throw new Error(`--against and --probe apply to ${ALL.filter((s) => s.beside).map((s) => s.name).join(", ")}: select one with --only`);
  return besideTrees(o.against, o.probe);
}

async function main(): Promise<void> {
  const o = options();
  const { opts, only, verbose } = o;
  const started = Date.now();
  const before = machine();
  const fleet = only.every((s) => s.real || s.vars) ? "fleets fixed per shape" : `K=${opts.k} M=${opts.m} concurrency=${opts.concurrency}`;
  console.error(`bench: ${only.map((s) => s.name).join(", ")} with ${fleet}${opts.quick ? " (quick)" : ""}; ${before.cores} cores, Node ${before.node}, load ${before.loadavg}`);
  const standin = await startStandin({ logLimit: 200_000 });
  const tree = here();
  const measured = commit();
  const others = treesBeside(o);
  /** Every wrangler started, with the file its output goes to at the end. */
  const gateways: { gateway: Gateway; log: string }[] = [];
  const rows: Row[] = [];
  const matrix: MatrixLine[] = [];
  const results: Record<string, unknown> = {};
  try {
    const needPlain = only.some((s) => s.passthrough);
    const gatewayOf = (root: string) =>
      start({
        // Every built-in at its dialect in the stand-in (openai and anthropic unprefixed, as before).
        root, providers: { ...gatewayProviders(standin.url), ...Object.assign({}, ...only.map((s) => s.providers?.(standin.url) ?? {})) }, verbose,
        vars: { ...scenarioVars(only, standin), ADMIN_TOKEN, ...(opts.timeline && { LOG_LEVEL: "debug" }) },
        // A timeline reads the limiter's grants from its debug lines.
        ...(opts.timeline && { logLevel: "debug" as const }),
      });
    const [gateway, passthrough, ...besides] = await Promise.all([
      gatewayOf(tree.root),
      needPlain ? start({ root: resolve(import.meta.dirname, "passthrough"), vars: { UPSTREAM: standin.url }, verbose }) : null,
      ...others.map((t) => gatewayOf(t.root)),
    ]);
    gateways.push({ gateway, log: "gateway.log" }, ...(passthrough ? [{ gateway: passthrough, log: "passthrough.log" }] : []));
    gateways.push(...besides.map((b, i) => ({ gateway: b, log: `beside-${i + 1}.log` })));
    const beside: Beside[] = others.map((t, i) => ({ name: t.name, gateway: besides[i]!, probe: t.probe === true }));
    const ctx: Ctx = { opts, standin, gateway, passthrough, adminToken: ADMIN_TOKEN, name: measured, beside };
    for (const s of only) {
      const t = Date.now();
      console.error(`bench: ${s.name} ...`);
      const out = await s.run(ctx);
      rows.push(...out.rows);
      if (out.matrix) matrix.push(out.matrix);
      results[s.name] = { seconds: (Date.now() - t) / 1000, ...(out.data as object) };
      console.error(`bench: ${s.name} done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
    }
  } finally {
    // wrangler's warnings and errors (a Durable Object reset, an exception) for when a figure looks odd.
    for (const g of gateways) writeFileSync(resolve(import.meta.dirname, g.log), g.gateway.output());
    await Promise.all(gateways.map((g) => g.gateway.close()));
    await standin.close();
    tree.remove();
    for (const t of others) t.remove();
  }
  const after = machine();
  const text = table(rows);
  console.log(text);
  if (matrix.length) console.log(`\nReal-client matrix (targets: quota <= 1.10x ideal, cap <= 1.15x, faults <= 1.0x direct, promptfoo <= 1.15x and generations = tests; <= 2% upstream 429s; no caller-visible 429 or error; simulator within 10% / 2 points)\n\n${matrixTable(matrix)}`);
  const besideNames = others.length ? `, beside ${others.map((t) => t.name).join(", ")}` : "";
  console.log(`\ncommit ${measured}${besideNames}; ${after.cores} x ${after.cpu}, Node ${after.node}, ${after.date}; load average ${before.loadavg} before, ${after.loadavg} after; ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
  const misses = rows.filter((r) => r.pass === false).length;
  console.log("Direct callers: openai SDK, default maxRetries 2. Through the gateway: maxRetries 0 (the gateway retries).");
  console.log(`${rows.filter((r) => r.pass).length} targets met, ${misses} missed`);
  writeFileSync(resolve(import.meta.dirname, "results.json"), `${JSON.stringify({ commit: measured, machine: { ...after, loadavgBefore: before.loadavg }, options: opts, rows, table: text, matrix, results }, null, 2)}\n`);
}

await main();
