// Where workerd's memory goes under load, by hand (BENCHMARKS.md, "Soak"):
//   npm run soak:memory -- --worker gateway|plain [--runtime miniflare|wrangler] [--count N] [--heap]
//   npm run soak:memory -- --queued N [--mb M] --heap: N requests of M MiB (default 16 of 10) queued
//   behind one slow one on a key limited to 1; memory is read while they wait.
// miniflare: the bundled Worker in one workerd started by Miniflare, as wrangler dev starts it but
// without wrangler's dev proxy in front; --heap also reads the JS heaps of the Worker's isolate
// through the inspector. wrangler: `wrangler dev` as the soak runs it, RSS split per workerd process.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startGateway } from "../support/gateway.ts";
import { startStandin } from "../support/standin/index.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const INSPECTOR_PORT = 9_555;
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const worker = arg("worker", "gateway");
const runtime = arg("runtime", "miniflare");
const count = Number(arg("count", "10000"));
const heap = process.argv.includes("--heap");
const mb = (kb: number) => Math.round(kb / 1024);

interface Proc { pid: number; pgid: number; cmd: string; rssKb: number }

function workerdProcesses(): Proc[] {
  const out: Proc[] = [];
  for (const d of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (!stat.includes("(workerd)")) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${d}/status`, "utf8"));
      out.push({ pid: Number(d), pgid: Number(fields[2]), cmd: readFileSync(`/proc/${d}/cmdline`, "utf8"), rssKb: Number(rss?.[1] ?? 0) });
    } catch {}
  }
  return out;
}

/** JS heap used / allocated (MB) of the Worker's isolates, through workerd's inspector. */
async function heaps(): Promise<string> {
  const targets = (await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`)).json()) as { id: string; webSocketDebuggerUrl: string }[];
  const parts: string[] = [];
  for (const t of targets.filter((x) => x.id.startsWith("core:user:"))) {
    const ws = new WebSocket(t.webSocketDebuggerUrl);
    await new Promise((ok, fail) => ((ws.onopen = ok), (ws.onerror = fail)));
    const usage = await new Promise<{ usedSize?: number; totalSize?: number }>((ok) => {
      ws.onmessage = (e) => ok((JSON.parse(String(e.data)) as { result?: object }).result ?? {});
      ws.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" }));
      setTimeout(() => ok({}), 5_000);
    });
    ws.close();
    parts.push(`heap ${mb((usage.usedSize ?? 0) / 1024)}/${mb((usage.totalSize ?? 0) / 1024)} MB`);
  }
  return parts.join(" ");
}

/** The Worker as `wrangler deploy` bundles it, for Miniflare to run. */
function bundle(dir: string, out: string): string {
  const r = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", out], { cwd: dir, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bundling failed:\n${r.stdout}${r.stderr}`);
  return join(out, "index.js");
}

const standin = await startStandin({ rpm: 0, tpm: 0, latencyMs: 20, jitterMs: 40, streamChunks: 6, seed: 1 });
const tmp = mkdtempSync(join(tmpdir(), "slotgate-memory-"));
let url: string;
let sample: () => Promise<string>;
let close: () => Promise<void>;
if (runtime === "wrangler") {
  const gw = worker === "plain"
    ? await startGateway({ root: join(ROOT, "bench/passthrough"), vars: { UPSTREAM: standin.url } })
    : await startGateway({ providers: { openai: { baseUrl: standin.url } }, vars: { ADMIN_TOKEN: "memory" } });
  const mine = workerdProcesses().find((p) => p.cmd.includes(`127.0.0.1:${gw.port}`))?.pgid;
  url = gw.url;
  close = gw.close;
  // wrangler dev runs two workerd processes: its dev proxy on the port, and the Worker's runtime.
  sample = async () => {
    const procs = workerdProcesses().filter((p) => p.pgid === mine);
    const proxy = procs.filter((p) => p.cmd.includes(`127.0.0.1:${gw.port}`)).reduce((s, p) => s + p.rssKb, 0);
    const all = procs.reduce((s, p) => s + p.rssKb, 0);
    return `${mb(all)} MB (dev proxy ${mb(proxy)}, Worker ${mb(all - proxy)})`;
  };
} else {
  // The miniflare wrangler itself uses, whichever way npm laid it out.
  const path = createRequire(createRequire(join(ROOT, "package.json")).resolve("wrangler/package.json")).resolve("miniflare");
  const { Miniflare, convertV4MiniflareOptions } = (await import(pathToFileURL(path).href)) as typeof import("miniflare");
  const base = { modules: true, compatibilityDate: "2026-11-01", compatibilityFlags: ["enable_request_signal"] };
  // Module names are relative to modulesRoot, which must hold the bundle (the default is the cwd).
  const plain = {
    name: "plain", ...base, modulesRoot: tmp, scriptPath: bundle(join(ROOT, "bench/passthrough"), join(tmp, "plain")),
    bindings: { UPSTREAM: standin.url },
  };
  const gateway = {
    name: "gateway", ...base, modulesRoot: tmp, scriptPath: bundle(ROOT, join(tmp, "gateway")),
    bindings: { ADMIN_TOKEN: "memory", PROVIDERS: JSON.stringify({ openai: { baseUrl: standin.url } }) },
    durableObjects: { LIMITER: { className: "Limiter", useSQLite: true }, DIRECTORY: { className: "Directory", useSQLite: true } },
  };
  const mf = new Miniflare(convertV4MiniflareOptions({
    ...(heap ? { inspectorPort: INSPECTOR_PORT } : {}),
    resourcePersistencePath: join(tmp, "state"),
    workers: [worker === "plain" ? plain : gateway],
  }));
  url = (await mf.ready).origin;
  close = () => mf.dispose();
  sample = async () => {
    const rss = workerdProcesses().filter((p) => readFileSync(`/proc/${p.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1] === String(process.pid));
    return `${mb(rss.reduce((s, p) => s + p.rssKb, 0))} MB${heap ? `, ${await heaps()}` : ""}`;
  };
}

/** N big bodies waiting in one key's queue: what the isolate holds for them. */
async function queuedBodies(n: number, mib: number): Promise<void> {
  const call = (content: string) => fetch(`${url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-memory-queued", "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 8, messages: [{ role: "user", content }] }),
  }).then(async (r) => (await r.arrayBuffer(), r.status), () => "failed");
  await call("first");
  const list = (await (await fetch(`${url}/admin/keys`, { headers: { authorization: "Bearer memory" } })).json()) as { keys: { key: string }[] };
  const found = list.keys.find((k) => k.key.startsWith("openai:gpt-4o-mini:"))!.key;
  await fetch(`${url}/admin/keys/${encodeURIComponent(found)}/config`, {
    method: "PUT", headers: { authorization: "Bearer memory", "content-type": "application/json" }, body: JSON.stringify({ limit: 1, maxConcurrency: 1 }),
  });
  standin.configure({ latencyMs: 20_000, jitterMs: 0 });
  console.log(`idle: ${await sample()}`);
  const all = [call("holder"), ...Array.from({ length: n }, (_, i) => call(`${i}`.padEnd(mib * 2 ** 20 - 1_024, "x")))];
  for (let i = 0; i < 2; i++) {
    await new Promise((r) => setTimeout(r, 5_000));
    const state = (await (await fetch(`${url}/admin/keys/${encodeURIComponent(found)}`, { headers: { authorization: "Bearer memory" } })).json()) as { concurrency: { queued: number; inFlight: number } };
    console.log(`${n} x ${mib} MiB sent, ${state.concurrency.queued} queued, ${state.concurrency.inFlight} in flight: ${await sample()}`);
  }
  standin.configure({ latencyMs: 20, jitterMs: 0 });
  const statuses = await Promise.all(all);
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  console.log(`all answered ${JSON.stringify(counts)}: ${await sample()}`);
}

try {
  const queued = Number(arg("queued", "0"));
  if (queued > 0) {
    await queuedBodies(queued, Number(arg("mb", "10")));
  } else await load();
} finally {
  await close();
  await standin.close();
  rmSync(tmp, { recursive: true, force: true });
}

/** `count` requests, 32 at a time, memory read every tenth. */
async function load(): Promise<void> {
  console.log(`${worker} under ${runtime}, ${count} requests, 32 at a time`);
  console.log(`0: ${await sample()}`);
  const started = Date.now();
  let next = 0;
  let done = 0;
  const loop = async () => {
    for (let i = next++; i < count; i = next++) {
      const res = await fetch(`${url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer sk-memory-${i % 3}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o-mini", stream: i % 10 < 3, max_tokens: 32, messages: [{ role: "user", content: `memory ${i}` }] }),
      });
      await res.arrayBuffer();
      if (++done % Math.max(1, Math.floor(count / 10)) === 0) console.log(`${done}: ${await sample()}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, loop));
  await new Promise((r) => setTimeout(r, 5_000));
  console.log(`5 s idle: ${await sample()}; ${Math.round((Date.now() - started) / 1000)} s`);
}
