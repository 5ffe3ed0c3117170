#!/usr/bin/env node
// `node scripts/with-node.mjs <command> [args...]`: runs the command as it is where this Node is new
// enough (see node-choice.mjs), else with Node 24 from the npm registry first on PATH. The npm
// scripts in package.json and .ci/run go through it, so they work on a machine with Node 20.
import { projectNodeEnv, runAndExit } from "./node-setup.mjs";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write("usage: node scripts/with-node.mjs <command> [args...]\n");
  process.exit(2);
}
runAndExit(command, args, projectNodeEnv());
