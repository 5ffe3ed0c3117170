#!/usr/bin/env node
// The slotgate command. Its sources are TypeScript with extensionless imports and parameter
// properties, which Node's built-in type stripping cannot run, so tsx loads them.
const major = Number(process.versions.node.split(".")[0]);
if (major < 22) {
  process.stderr.write(`slotgate needs Node 22 or newer; this is ${process.version}\n`);
  process.exit(1);
}
const { register } = await import("tsx/esm/api");
register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
