// Long-running processes a test (or the demo) starts, such as wrangler dev with its workerd, or
// Prometheus: each runs under supervise.ts in a process group of its own, tied to this process by a
// pipe, so it is stopped when this process ends however it ends (Ctrl-C or SIGTERM on `npm test`, a
// crash, SIGKILL), and can be stopped on purpose, whole, with one signal to the group.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";

const SUPERVISOR = resolve(import.meta.dirname, "supervise.ts");

export interface OwnedOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `command` under the supervisor. Its stdout and stderr are the returned child's; its pid is
 * the group's id (`process.kill(-child.pid, ...)` reaches everything it started).
 */
export function spawnOwned(command: string, args: string[], o: OwnedOptions = {}): ChildProcess {
  const child = spawn(process.execPath, [SUPERVISOR, command, ...args], { cwd: o.cwd, env: o.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  // Never written to: only its end matters. A write after the supervisor is gone must not throw here.
  child.stdin!.on("error", () => {});
  return child;
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves once its leader has exited. */
export function stopGroup(child: ChildProcess, graceMs = 5_000): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const timer = setTimeout(() => signal(child, "SIGKILL"), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      done();
    });
    if (!signal(child, "SIGTERM")) done();
  });
}

/** Sends `sig` to the child's whole group; false when there is none. */
export function signal(child: ChildProcess, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-child.pid!, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Calls `each` with the pid, the command (as /proc names it, e.g. `workerd`) and the /proc stat
 * fields after the command of every live member of a process group (Linux /proc). A zombie (state
 * Z) has ended, only its parent has not read its status yet: it is left out.
 */
export function eachInGroup(pgid: number, each: (pid: string, command: string, fields: string[]) => void): void {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") each(pid, stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), fields);
    } catch {}
  }
}

/** The pids of a process group's members that are still alive: none once it is all gone. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  eachInGroup(pgid, (pid) => out.push(Number(pid)));
  return out;
}
