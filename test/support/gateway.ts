// Starts the real gateway with `wrangler dev` (workerd, local Durable Object storage) on a free
// loopback port, for end-to-end tests, the demo and the benchmark. Runs under plain Node 24. The
// gateway's configuration is only what it is given here: never the developer's `.dev.vars` or `.env`
// (wrangler reads neither once it is given an env file: `--env-file` in `wrangler dev --help`), nor
// their environment. It runs under supervise.ts (owned.ts), so it ends when the process that started
// it ends, however that ends.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { eachInGroup, spawnOwned, stopGroup } from "./owned.ts";

export interface GatewayOptions {
  /** The `PROVIDERS` variable, e.g. `{ openai: { baseUrl: standin.url } }`. */
  providers?: Record<string, { baseUrl: string; headers?: string; quota?: unknown }>;
  /** Other vars (`MAX_ATTEMPTS`, `START_CONCURRENCY`, ...). */
  vars?: Record<string, string>;
  /** Project root holding wrangler.toml; defaults to this repo. */
  root?: string;
  /** Echo wrangler's output (for debugging). */
  verbose?: boolean;
  /** wrangler's --log-level; `log` also prints the Worker's console.log (info) lines. Default `warn`. */
  logLevel?: "warn" | "log" | "debug";
  /** The loopback port to serve on; default: a free one. */
  port?: number;
  /** More environment for wrangler (bench/profile: MINIFLARE_WORKERD_PATH, to run workerd under callgrind). */
  env?: Record<string, string>;
  /** How long it may take to answer /healthz; default 60 s. */
  readyMs?: number;
}

export interface Gateway {
  url: string;
  port: number;
  /** wrangler's --inspector-port: the Chrome DevTools protocol of the Worker's isolate (bench/profile). */
  inspectorPort(): number;
  /** wrangler's --persist-to directory: the Durable Objects' storage, for tests that scan it. Removed on close. */
  persistDir: string;
  close(): Promise<void>;
  /** SIGKILL to wrangler's whole process group (a crash); resolves when it is gone. */
  kill(): Promise<void>;
  /** Starts wrangler again on the same port and storage (after kill), resolves when it answers. */
  restart(): Promise<void>;
  /** The process group of wrangler and its workerd (their supervisor's pid). */
  group(): number;
  /** Everything wrangler printed, for assertions on logs. */
  output(): string;
  /** Resident memory of the gateway's workerd processes, in bytes (Linux /proc). */
  rss(): number;
  /** Time each of the gateway's workerd processes has spent on a CPU, and waiting on a run queue, so far (ms, Linux schedstat). */
  sched(): Sched;
}

/** Calls `each` with the pid and /proc stat fields (after the command) of every workerd process of a process group. */
function eachWorkerd(pgid: number, each: (pid: string, fields: string[]) => void): void {
  eachInGroup(pgid, (pid, command, fields) => command === "workerd" && each(pid, fields));
}

/** Sums VmRSS over the processes of a process group whose command is workerd. */
function groupRss(pgid: number): number {
  let total = 0;
  eachWorkerd(pgid, (pid) => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (m) total += Number(m[1]) * 1024;
  });
  return total;
}

/** Per workerd process of a process group: time on a CPU and waiting on a run queue, over its threads (Linux schedstat, ms). */
export type Sched = Record<string, { cpuMs: number; waitMs: number }>;

function groupSched(pgid: number): Sched {
  const out: Sched = {};
  eachWorkerd(pgid, (pid) => {
    let cpu = 0;
    let wait = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [run, queued] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
      cpu += run ?? 0;
      wait += queued ?? 0;
    }
    out[pid] = { cpuMs: cpu / 1e6, waitMs: wait / 1e6 };
  });
  return out;
}

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? ok(addr.port) : fail(new Error("no port"))));
    });
  });
}

export async function startGateway(opts: GatewayOptions = {}): Promise<Gateway> {
  const root = opts.root ?? resolve(import.meta.dirname, "../..");
  let port = opts.port ?? (await freePort());
  const persist = mkdtempSync(join(tmpdir(), "slotgate-e2e-"));
  // The only env file wrangler reads: empty. Every var comes as --var below.
  const envFile = join(persist, "gateway.env");
  writeFileSync(envFile, "");
  let url = `http://127.0.0.1:${port}`;
  let inspector = 0;
  let log = "";
  const collect = (b: Buffer) => {
    log += b.toString();
    if (log.length > 2_000_000) log = log.slice(-1_000_000);
    if (opts.verbose) process.stderr.write(b);
  };

  /** Starts wrangler on this port and storage, and waits until it answers /healthz. */
  const launch = async (): Promise<ChildProcess> => {
    inspector = await freePort();
    const args = ["wrangler", "dev", "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(inspector),
      "--persist-to", persist, "--env-file", envFile, "--show-interactive-dev-session=false", "--log-level", opts.logLevel ?? "warn"];
    if (opts.providers) args.push("--var", `PROVIDERS:${JSON.stringify(opts.providers)}`);
    // Virtual keys need a secret of their own beside the admin token (src/keys/keys.ts).
    const vars = opts.vars?.ADMIN_TOKEN && !opts.vars.VIRTUAL_KEY_SECRET ? { ...opts.vars, VIRTUAL_KEY_SECRET: `vks-${opts.vars.ADMIN_TOKEN}` } : opts.vars;
    for (const [k, v] of Object.entries(vars ?? {})) args.push("--var", `${k}:${v}`);
    const child = spawnOwned("npx", args, {
      cwd: root,
      // CLOUDFLARE_INCLUDE_PROCESS_ENV would make this environment's variables the Worker's too.
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CLOUDFLARE_INCLUDE_PROCESS_ENV: "false", NO_COLOR: "1", CI: "true", ...opts.env },
    });
    child.stdout!.on("data", collect);
    child.stderr!.on("data", collect);
    const deadline = Date.now() + (opts.readyMs ?? 60_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log}`);
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
        if (res.ok) return child;
      } catch {}
      if (Date.now() > deadline) {
        await stopGroup(child);
        throw new Error(`wrangler dev did not become ready in ${(opts.readyMs ?? 60_000) / 1000} s:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  let child: ChildProcess | null = null;
  const close = async () => {
    if (child) await stopGroup(child);
    rmSync(persist, { recursive: true, force: true });
  };
  // A port is picked free and then bound by wrangler: another gateway starting at the same moment
  // (the e2e files run two at a time) can take it first. Then wrangler exits at once with "Address
  // already in use", and a new pair of ports is tried; a port the caller chose is kept.
  for (let tries = 1; ; tries++) {
    try {
      child = await launch();
      break;
    } catch (err) {
      const taken = err instanceof Error && err.message.includes("Address already in use");
      if (!taken || opts.port !== undefined || tries >= 4) {
        await close();
        throw err;
      }
      port = await freePort();
      url = `http://127.0.0.1:${port}`;
      log = "";
    }
  }
  const kill = () =>
    new Promise<void>((done) => {
      const c = child!;
      if (c.exitCode !== null || c.signalCode !== null) return done();
      c.once("exit", () => done());
      process.kill(-c.pid!, "SIGKILL"); // the whole group, wrangler and its workerd, with no time to write anything
    });
  const restart = async () => {
    child = await launch();
  };
  return { url, port, inspectorPort: () => inspector, group: () => child!.pid!, persistDir: persist, close, kill, restart, output: () => log, rss: () => groupRss(child!.pid!), sched: () => groupSched(child!.pid!) };
}
