// npm run profile -- [--mode cpu|instructions] [--against REV|DIR]... [--probe] [--only-beside] [--in-flight 1,48] [--seconds N] [--requests N] [--top N] [--out DIR]
// Where the Worker's own time goes, request by request, for the plain pass-through Worker, this
// tree's gateway and any beside it (`--against`, `--probe`: bench/trees.ts), each under wrangler dev
// against the stand-in at latency 0, driven by the openai SDK as the overhead scenario drives it.
//   cpu           V8's sampling profiler over the inspector (bench/profile/devtools.ts): µs a request
//                 by function and by source module, self and inclusive; each profile is written to
//                 --out as a .cpuprofile (open it in Chrome DevTools or speedscope).
//   instructions  valgrind's callgrind counts the instructions of the workerd process that runs the
//                 Worker and its objects (bench/profile/callgrind.ts): repeatable on a busy machine.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { loadavg } from "node:os";
import { basename, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Gateway, type GatewayOptions, startGateway } from "../test/support/gateway.ts";
import { gatewayProviders, type Standin, startStandin } from "../test/support/standin/index.ts";
import type { ClientSpec } from "./client.ts";
import { MODEL, PROMPT } from "./context.ts";
import { runFleet } from "./fleet.ts";
import { callgrindEnv, callgrindPid, dump, instructionsIn, zero } from "./profile/callgrind.ts";
import { bundleUrl, devtools, profiled } from "./profile/devtools.ts";
import { byStage } from "./profile/stages.ts";
import { type CpuProfile, type Locate, moduleOf, summarise, top } from "./profile/summary.ts";
import { besideTrees, copyOf, here, parseAgainst, probe, type Tree } from "./trees.ts";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "cpu" },
    against: { type: "string", multiple: true, default: [] },
    probe: { type: "boolean", default: false },
    "only-beside": { type: "boolean", default: false },
    "in-flight": { type: "string" },
    seconds: { type: "string", default: "8" },
    requests: { type: "string", default: "200" },
    top: { type: "string", default: "25" },
    out: { type: "string", default: resolve(import.meta.dirname, "profiles") },
    verbose: { type: "boolean", default: false },
    read: { type: "string" },
  },
});
const mode = values.mode === "instructions" ? "instructions" : "cpu";
const inFlight = (values["in-flight"] ?? (mode === "cpu" ? "1,48" : "1,16")).split(",").map(Number);
const out = resolve(values.out!);
mkdirSync(out, { recursive: true });

/** A Worker to measure: the plain one, or a tree's gateway. */
interface Target {
  name: string;
  /** Its vars, for a start that adds to them. */
  vars: Record<string, string>;
  start(extra: Partial<GatewayOptions>): Promise<Gateway>;
}

/** The same fleet as the overhead scenario: one SDK process per 24 in flight. */
function fleetOf(gw: Gateway, c: number, more: Partial<ClientSpec>): { k: number; spec: ClientSpec } {
  const k = Math.max(1, Math.ceil(c / 24));
  return { k, spec: { baseURL: `${gw.url}/openai/v1`, apiKey: "sk-bench-profile", model: MODEL, prompt: PROMPT, maxTokens: 16, maxRetries: 0, requests: 0, concurrency: Math.ceil(c / k), ...more } };
}

/** Bundle positions (of `name`, as workerd names the bundle in a profile) in the TypeScript, through a source map. */
function mapLocate(mapFile: string | null, name: string | null): Locate {
  const map = mapFile && existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : null;
  return (u, line, column) => {
    if (!map || u !== name) return null;
    const e = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    return e.originalSource ? { source: moduleOf(e.originalSource), line: (e.originalLine ?? 0) + 1 } : null;
  };
}

/** The bundle the isolate runs, through its source map beside it, copied to `keep` so a profile can be read after its tree is gone. */
function locator(url: string | null, keep: string): Locate {
  const file = url ? fileURLToPath(url) : null;
  if (file && existsSync(`${file}.map`)) copyFileSync(`${file}.map`, keep);
  return mapLocate(file ? `${file}.map` : null, file ? basename(file) : null);
}

/** V8's sampling interval, µs. */
const INTERVAL_US = 100;

const slug = (s: string) => s.replace(/[^A-Za-z0-9.+-]+/g, "-");
const us = (x: number) => x.toFixed(1);

/** A profile's tables, µs a request. */
function report(p: CpuProfile, locate: Locate, served: number): string[] {
  const s = summarise(p, locate, INTERVAL_US);
  const js = s.totalUs - s.idleUs - s.programUs - s.gcUs;
  const n = Number(values.top);
  const table = (title: string, m: Map<string, number>) => ["", `| ${title} | µs a request |`, "| --- | --- |", ...top(m, served, n).map(([k, v]) => `| ${k} | ${us(v)} |`)];
  const stages = byStage(s.charged);
  const staged = stages.reduce((a, [, v]) => a + v, 0);
  return [
    `µs a request in the isolate: JavaScript ${us(js / served)}, garbage collection ${us(s.gcUs / served)}, the runtime outside JavaScript (program) ${us(s.programUs / served)}, idle ${us(s.idleUs / served)}`,
    "", "| by stage (bench/profile/stages.ts) | µs a request | share |", "| --- | --- | --- |", ...stages.map(([k, v]) => `| ${k} | ${us(v / served)} | ${((100 * v) / staged).toFixed(0)}% |`),
    ...table("self, the runtime's APIs charged to their caller", s.charged),
    ...table("self, by function", s.byFunction.self),
    ...table("inclusive, by function (one synchronous stretch: an await ends it)", s.byFunction.inclusive),
    ...table("self, by module", s.byModule.self),
  ];
}

async function cpu(t: Target, standin: Standin): Promise<string[]> {
  const gw = await t.start({});
  const lines: string[] = [];
  try {
    const d = await devtools(gw.inspectorPort());
    const locate = locator(await bundleUrl(d), resolve(out, `${slug(t.name)}.js.map`));
    const warm = fleetOf(gw, 48, { durationMs: 3_000 });
    await runFleet(warm.k, warm.spec);
    for (const c of inFlight) {
      const f = fleetOf(gw, c, { durationMs: Number(values.seconds) * 1_000 });
      standin.resetStats();
      let served = 0;
      const load = loadavg()[0]!;
      const p = await profiled(d, INTERVAL_US, async () => {
        served = (await runFleet(f.k, f.spec)).ok;
      });
      writeFileSync(resolve(out, `${slug(t.name)}-${c}.cpuprofile`), JSON.stringify(p));
      lines.push(`\n### ${t.name}, ${c} in flight: ${served} requests in ${values.seconds} s (load ${load.toFixed(1)})\n`, ...report(p, locate, served));
    }
    d.close();
  } finally {
    await gw.close();
  }
  return lines;
}

async function instructions(t: Target): Promise<string[]> {
  const dir = resolve(out, `callgrind-${slug(t.name)}`);
  mkdirSync(dir, { recursive: true });
  // Counts leave an isolate once a second (STATS_FLUSH_MS): at valgrind's few requests a second that
  // call would weigh on each request fifty times what it does at full speed, and with the machine's load.
  const gw = await t.start({ env: callgrindEnv(dir), readyMs: 300_000, vars: { ...t.vars, STATS_FLUSH_MS: "60000" } });
  const lines: string[] = [];
  try {
    const pid = callgrindPid(gw.group());
    if (!pid) throw new Error(`${t.name}: no workerd under callgrind`);
    const n = Number(values.requests);
    for (const c of inFlight) {
      const f = fleetOf(gw, c, { requests: Math.ceil(n / Math.ceil(c / 24)) });
      await runFleet(f.k, f.spec, undefined, 1_800_000); // warm: V8 tiers the hot functions up
      zero(pid);
      const served = (await runFleet(f.k, f.spec, undefined, 1_800_000)).ok;
      const file = dump(pid, dir);
      const ir = instructionsIn(readFileSync(file, "utf8"));
      lines.push(`| ${t.name} | ${c} | ${served} | ${(ir / served / 1e6).toFixed(2)} | ${file} |`);
    }
  } finally {
    await gw.close();
  }
  return lines;
}

// --read <x.cpuprofile> --requests N: the tables of a profile written before (its map beside it, `<Worker>.js.map`).
if (values.read) {
  const file = resolve(values.read);
  const map = file.replace(/-\d+\.cpuprofile$/, ".js.map");
  const locate = mapLocate(map, "index.js");
  console.log(report(JSON.parse(readFileSync(file, "utf8")) as CpuProfile, locate, Number(values.requests)).join("\n"));
  process.exit(0);
}

const standin = await startStandin({ latencyMs: 0 });
const trees: Tree[] = [];
try {
  // --only-beside: the trees named (and their probes), without this one or the plain Worker: the variants of an ablation, say.
  const only = values["only-beside"]!;
  const named = (a: string) => [copyOf(parseAgainst(a)), ...(values.probe ? [probe(copyOf(parseAgainst(a)))] : [])];
  trees.push(...(only ? values.against!.flatMap(named) : [here(), ...besideTrees(values.against!, values.probe!)]));
  const verbose = values.verbose!;
  const targets: Target[] = [
    ...(only ? [] : [{ name: "plain Worker", vars: { UPSTREAM: standin.url }, start: (x: Partial<GatewayOptions>) => startGateway({ root: resolve(import.meta.dirname, "passthrough"), vars: { UPSTREAM: standin.url }, verbose, ...x }) }]),
    ...trees.map((tr) => {
      const vars = { ADMIN_TOKEN: "bench-admin-token" };
      return { name: tr.name, vars, start: (x: Partial<GatewayOptions>) => startGateway({ root: tr.root, providers: gatewayProviders(standin.url), vars, verbose, ...x }) };
    }),
  ];
  console.error(`profile (${mode}): ${targets.map((t) => t.name).join(", ")} at ${inFlight.join(", ")} in flight; load ${loadavg().map((x) => x.toFixed(1)).join(" ")}`);
  const lines: string[] = mode === "cpu" ? [] : ["| Worker | in flight | requests | million instructions a request | dump |", "| --- | --- | --- | --- | --- |"];
  for (const t of targets) lines.push(...(mode === "cpu" ? await cpu(t, standin) : await instructions(t)));
  console.log(lines.join("\n"));
} finally {
  await standin.close();
  for (const t of trees) t.remove();
}
