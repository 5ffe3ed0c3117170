// `npm test`'s preflight (npm runs `pretest` first): one clear line on what to install, never a
// cryptic failure later on a machine without chromium or Prometheus's tools.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const PREFLIGHT = resolve(import.meta.dirname, "../../scripts/preflight.mjs");
const run = (env: Record<string, string>) => spawnSync(process.execPath, [PREFLIGHT], { env: { ...process.env, ...env }, encoding: "utf8" });

describe("npm test preflight", () => {
  it("with a tool missing: exits 1 with one line naming it and the apt-get command", () => {
    const r = run({ CHROMIUM_PATH: "/nonexistent/chromium", PROMTOOL_PATH: process.execPath, PROMETHEUS_PATH: "/nonexistent/prometheus" });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("/nonexistent/chromium");
    expect(lines[0]).toContain("/nonexistent/prometheus");
    expect(lines[0]).toMatch(/apt-get install -y --no-install-recommends chromium prometheus/);
  });

  it("with every tool there: silent, exit 0", () => {
    const r = run({ CHROMIUM_PATH: process.execPath, PROMTOOL_PATH: process.execPath, PROMETHEUS_PATH: process.execPath });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe("");
  });

  it("is what npm runs before the suite", () => {
    const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.pretest).toBe("node scripts/preflight.mjs");
  });
});
