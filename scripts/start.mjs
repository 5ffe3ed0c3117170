#!/usr/bin/env node
// `npm start`: `wrangler dev` on http://127.0.0.1:8787 with local storage in .wrangler/state and,
// once it answers, one line per part of the gateway its local secrets leave off (no ADMIN_TOKEN: no
// admin API or dashboard; no VIRTUAL_KEY_SECRET: no virtual keys) with the command that turns it on
// (start-hints.mjs). The variables are read by wrangler's own code (`unstable_getMiniflareWorkerOptions`,
// the same `.dev.vars`, else `.env`, rules as `wrangler dev`), with `--var` on the command line over
// them. Arguments after `npm start --` go to wrangler dev (`npm start -- --port 8788`). Runs on the
// Node the npm scripts run on (scripts/with-node.mjs).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { runAndExit } from "./node-setup.mjs";
import { startHints } from "./start-hints.mjs";

/** Where wrangler dev finds wrangler.toml and .dev.vars: the folder it starts in (npm runs scripts in the package's). */
const ROOT = process.cwd();
const DEFAULTS = { ip: "127.0.0.1", port: "8787", "persist-to": ".wrangler/state" };

const given = process.argv.slice(2);
const { values } = parseArgs({
  args: given,
  strict: false,
  options: { port: { type: "string" }, env: { type: "string" }, "env-file": { type: "string", multiple: true }, var: { type: "string", multiple: true } },
});
/** @type {string[]} */
const args = ["dev"];
for (const [flag, value] of Object.entries(DEFAULTS)) if (!given.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`))) args.push(`--${flag}`, value);
args.push(...given);

/** @type {string[]} */
let hints;
try {
  const vars = await workerVars();
  const file = /** @type {string[] | undefined} */ (values["env-file"])?.join(", ") ?? (existsSync(join(ROOT, ".dev.vars")) || !existsSync(join(ROOT, ".env")) ? ".dev.vars" : ".env");
  hints = startHints(vars, { port: Number(values.port ?? DEFAULTS.port), file });
} catch (err) {
  // The hints are a help, never a reason not to start: wrangler says what is wrong with the config.
  hints = [`slotgate: could not read the local variables (${err instanceof Error ? err.message : String(err)})`];
}
// wrangler's own launcher (its package exports only its API, wrangler-dist/cli.js, beside bin/).
const wrangler = join(dirname(createRequire(import.meta.url).resolve("wrangler")), "..", "bin", "wrangler.js");
runAndExit(process.execPath, [wrangler, ...args], process.env);
void sayWhenReady(`http://127.0.0.1:${values.port ?? DEFAULTS.port}/healthz`, hints);

/**
 * Prints `lines` once the gateway answers `url`, below wrangler's banner and "Ready on" where they
 * are seen; nothing if it never answers (wrangler has said why).
 * @param {string} url
 * @param {string[]} lines
 */
async function sayWhenReady(url, lines) {
  const end = Date.now() + 120_000;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250).unref());
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(5_000) })).ok) {
        process.stderr.write(`${lines.join("\n")}\n`);
        return;
      }
    } catch {}
  }
}

/**
 * The Worker's variables and secrets as `wrangler dev` will give them, names to values.
 * @returns {Promise<Record<string, string>>}
 */
async function workerVars() {
  const level = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "error"; // wrangler's own "Using secrets defined in .dev.vars" comes when it starts
  try {
    const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
    const env = typeof values.env === "string" ? values.env : undefined;
    const envFiles = /** @type {string[] | undefined} */ (values["env-file"]);
    // `envFiles` is read by its code (4.164: passed on to getVarsForDev) though its types leave it out.
    const options = unstable_getMiniflareWorkerOptions(join(ROOT, "wrangler.toml"), env, /** @type {{}} */ ({ envFiles }));
    const bindings = /** @type {Record<string, unknown>} */ (/** @type {{ bindings?: Record<string, unknown> }} */ (options.workerOptions).bindings ?? {});
    /** @type {Record<string, string>} */
    const out = {};
    for (const [name, value] of Object.entries(bindings)) if (typeof value === "string") out[name] = value;
    for (const v of values.var ?? []) {
      const at = String(v).indexOf(":");
      if (at > 0) out[String(v).slice(0, at)] = String(v).slice(at + 1);
    }
    return out;
  } finally {
    if (level === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = level;
  }
}
