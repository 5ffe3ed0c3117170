// Runs Prometheus's own checker, `promtool check metrics`, on an exposition. It parses with
// Prometheus's text parser (exit 1 on a parse error) and lints names and types (exit 3).
// Debian ships it in the `prometheus` package; .ci/run installs it. Without it these tests FAIL.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

export const PROMTOOL = process.env.PROMTOOL_PATH ?? "/usr/bin/promtool";
export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? "/usr/bin/prometheus";

export function requireTool(path: string): void {
  if (existsSync(path)) return;
  const how =
    `${path} not found: the metrics tests check the exposition with Prometheus's own tools.\n` +
    "Install Debian's package:  sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus\n" +
    "(or point PROMTOOL_PATH / PROMETHEUS_PATH at the binaries).";
  console.error(how);
  throw new Error(how);
}

export function checkMetrics(text: string): { status: number | null; output: string } {
  requireTool(PROMTOOL);
  const r = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, output: `${r.stdout ?? ""}${r.stderr ?? ""}`.trim() };
}
