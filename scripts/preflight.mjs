#!/usr/bin/env node
// Runs before `npm test` (npm's `pretest`): the suite drives a real browser and Prometheus's own
// tools, which npm cannot install. Says in one line what is missing and how to get it, rather than
// letting a test fail later with a cryptic error. Paths can be pointed elsewhere with the env vars.
import { accessSync, constants } from "node:fs";

const TOOLS = [
  { env: "CHROMIUM_PATH", path: "/usr/bin/chromium", pkg: "chromium" },
  { env: "PROMTOOL_PATH", path: "/usr/bin/promtool", pkg: "prometheus" },
  { env: "PROMETHEUS_PATH", path: "/usr/bin/prometheus", pkg: "prometheus" },
];

/** @param {string} p */
const runnable = (p) => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** @typedef {{ env: string; path: string; pkg: string; at: string }} Tool */

/** @returns {Tool[]} */
export function missing(env = process.env) {
  return TOOLS.map((t) => ({ ...t, at: env[t.env] || t.path })).filter((t) => !runnable(t.at));
}

/** @param {Tool[]} gone */
export function advice(gone) {
  const pkgs = [...new Set(gone.map((t) => t.pkg))].join(" ");
  return `npm test needs ${gone.map((t) => t.at).join(", ")}: install them with \`sudo apt-get update && sudo apt-get install -y --no-install-recommends ${pkgs}\` (Debian/Ubuntu), or point ${gone.map((t) => t.env).join(" / ")} at them; .ci/run installs them itself.`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const gone = missing();
  if (gone.length > 0) {
    process.stderr.write(`${advice(gone)}\n`);
    process.exit(1);
  }
}
