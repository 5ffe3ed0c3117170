// `node test/support/supervise.ts <command> [args...]`: runs the command and ends it, with everything
// it started, once whoever started this goes. Started by spawnOwned (owned.ts) as the leader of a
// process group of its own, with its stdin a pipe from the starter: that pipe ends when the starter
// exits in any way (done, Ctrl-C, SIGTERM, SIGKILL, a crash), and then the whole group (wrangler dev
// and its workerd, the demo, Prometheus) is stopped, so nothing a test started outlives the test run.
// A SIGTERM to the group (how a test stops it) does the same. Plain Node type stripping runs it.
import { spawn } from "node:child_process";

/** How long the group has to stop after SIGTERM before it is killed. */
const GRACE_MS = 5_000;

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: node supervise.ts <command> [args...]\n");
  process.exit(2);
}

// The command stays in this process's group: one signal to the group reaches it and what it starts.
const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"] });
let ending = false;

/** SIGTERM to the group (this process ignores it), SIGKILL to whatever is left after the grace. */
function endGroup(): void {
  if (ending) return;
  ending = true;
  signalGroup("SIGTERM");
  const last = () => signalGroup("SIGKILL"); // this process too: nothing is left to wait for
  const timer = setTimeout(last, GRACE_MS);
  child.once("exit", () => {
    clearTimeout(timer);
    // What the command started may still be going (workerd after wrangler): a short while, then all of it.
    setTimeout(last, 200);
  });
  if (child.exitCode !== null || child.signalCode !== null) setTimeout(last, 200);
}

function signalGroup(signal: NodeJS.Signals): void {
  try {
    process.kill(-process.pid, signal);
  } catch {
    // the group is already gone
  }
}

process.on("SIGTERM", endGroup);
process.on("SIGINT", endGroup);
process.on("SIGHUP", endGroup);
// The starter's end of the pipe closes when the starter exits, however it exits.
process.stdin.on("end", endGroup);
process.stdin.on("error", endGroup);
process.stdin.resume();

child.on("error", (err) => {
  process.stderr.write(`${command}: ${err.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  if (ending) return;
  // The command ended by itself (an error at start-up): stop anything it left, and end as it did.
  ending = true;
  signalGroup("SIGTERM");
  process.exit(code ?? (signal ? 128 : 1));
});
