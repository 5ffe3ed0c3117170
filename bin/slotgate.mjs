#!/usr/bin/env node
// The slotgate command. Its sources are TypeScript with extensionless imports and parameter
// properties, which Node's built-in type stripping cannot run, so tsx loads them. On a Node older
// than the project's commands need, the command runs itself again on Node 24 from the npm registry.
import { fileURLToPath } from "node:url";
import { isNewEnough } from "../scripts/node-choice.mjs";

if (!isNewEnough(process.versions.node)) {
  const { projectNodeEnv, runAndExit } = await import("../scripts/node-setup.mjs");
  runAndExit("node", [fileURLToPath(import.meta.url), ...process.argv.slice(2)], projectNodeEnv());
} else {
  const { register } = await import("tsx/esm/api");
  register();
  const { main } = await import("../src/cli/main.ts");
  process.exitCode = await main(process.argv.slice(2), fileURLToPath(import.meta.url));
}
