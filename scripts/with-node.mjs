#!/usr/bin/env node
// `node scripts/with-node.mjs [--pinned] <command> [args...]`: runs the command as it is where this
// Node is new enough (see node-choice.mjs), else with the pinned Node 24 and npm from the npm
// registry first on PATH. `--pinned` always uses those (CI: the npm that checks the lock is fixed).
// The npm scripts in package.json and .ci/run go through it, so they work on a machine with Node 20.
import { projectNodeEnv, runAndExit } from "./node-setup.mjs";

const argv = process.argv.slice(2);
const pinned = argv[0] === "--pinned";
const [command, ...args] = pinned ? argv.slice(1) : argv;
if (!command) {
  process.stderr.write("usage: node scripts/with-node.mjs [--pinned] <command> [args...]\n");
  process.exit(2);
}
runAndExit(command, args, projectNodeEnv(process.env, { pinned }));
