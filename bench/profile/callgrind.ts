// Instructions a request costs the process that runs the Worker (and its Durable Objects), counted
// by valgrind's callgrind: repeatable on a shared machine where wall-clock and CPU time are not.
// wrangler starts workerd through bench/profile/workerd-callgrind.sh; the counters are zeroed
// before the requests measured and dumped after them.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const WRAPPER = resolve(import.meta.dirname, "workerd-callgrind.sh");

/** The workerd binary wrangler's miniflare would start. */
function workerdBinary(): string {
  const wrangler = createRequire(resolve(import.meta.dirname, "../../package.json")).resolve("wrangler/package.json");
  const main = createRequire(wrangler).resolve("workerd");
  return createRequire(main)(main).default as string;
}

/** Environment for wrangler dev: its Worker's workerd under callgrind, dumps into `out`. */
export function callgrindEnv(out: string): Record<string, string> {
  execFileSync("valgrind", ["--version"]); // fails here, not in wrangler, without valgrind
  return { MINIFLARE_WORKERD_PATH: WRAPPER, SLOTGATE_WORKERD: workerdBinary(), CALLGRIND_OUT: out };
}

/** The process of group `pgid` running under callgrind (valgrind names it `callgrind-<arch>`). */
export function callgrindPid(pgid: number): number | null {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d)))
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && /\(callgrind-/.test(stat)) return Number(pid);
    } catch {}
  return null;
}

/** Counts from now on only. */
export const zero = (pid: number) => execFileSync("callgrind_control", ["-z", String(pid)], { stdio: "ignore" });

/** Dumps what was counted since `zero`: the dump's file. */
export function dump(pid: number, out: string): string {
  const before = new Set(readdirSync(out));
  execFileSync("callgrind_control", ["-d", String(pid)], { stdio: "ignore" });
  const made = readdirSync(out).filter((f) => f.startsWith(`cg.${pid}.`) && !before.has(f));
  if (made.length !== 1) throw new Error(`callgrind made ${made.length} dumps for ${pid} in ${out}`);
  return join(out, made[0]!);
}

/** The instructions a callgrind dump counted: its `totals:` (older: `summary:`) line's first event, Ir. */
export function instructionsIn(text: string): number {
  const m = /^(?:totals|summary):\s+(\d+)/m.exec(text);
  if (!m) throw new Error("no totals line in the callgrind dump");
  return Number(m[1]);
}
