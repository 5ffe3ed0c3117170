// What a machine that has never seen the project does first (.ci/run): the launcher installs the
// pinned toolchain into an empty home, and that npm accepts the lock as it is. This is what failed
// when the registry's newest Node 24 and the machine's npm moved under a lock an older npm wrote.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TOOLCHAIN } from "../../scripts/node-choice.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const WITH_NODE = join(ROOT, "scripts/with-node.mjs");
const home = mkdtempSync(join(tmpdir(), "slotgate-home-"));
const project = mkdtempSync(join(tmpdir(), "slotgate-lock-"));
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});

/**
 * The launcher in CI's mode, as on a machine that has never seen the project: this machine's
 * environment (its CA bundle, its global npmrc) with an empty home, nothing left of a launcher
 * already running, and npm's download cache shared (no network wasted).
 */
function freshEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("npm_") && k !== "SLOTGATE_FALLBACK_NODE") env[k] = v;
  if (process.env.npm_config_globalconfig) env.npm_config_globalconfig = process.env.npm_config_globalconfig;
  return { ...env, HOME: home, npm_config_cache: process.env.npm_config_cache || join(homedir(), ".npm"), npm_config_update_notifier: "false" };
}

function pinned(...command: string[]) {
  return pinnedIn(project, command);
}

function pinnedIn(cwd: string, command: string[]) {
  return spawnSync(process.execPath, [WITH_NODE, "--pinned", ...command], { cwd, env: freshEnv(), encoding: "utf8", timeout: 240_000 });
}

describe("a fresh machine: the pinned toolchain and the lock", () => {
  it("installs the pinned Node and npm into an empty home, and that npm's `npm ci` takes the lock unchanged", () => {
    copyFileSync(join(ROOT, "package.json"), join(project, "package.json"));
    copyFileSync(join(ROOT, "package-lock.json"), join(project, "package-lock.json"));
    const first = pinned("node", "-e", "console.log(process.version)");
    expect(first.stderr).toContain(`installing Node ${TOOLCHAIN.node} and npm ${TOOLCHAIN.npm}`);
    expect(first.stdout.trim()).toBe(`v${TOOLCHAIN.node}`);
    expect(first.status).toBe(0);

    const npm = pinned("npm", "--version");
    expect(npm.stderr).toContain("using Node");
    expect(npm.stdout.trim()).toBe(TOOLCHAIN.npm);

    // A dry run resolves the whole tree against the lock: a lock this npm would rewrite is refused.
    const ci = pinned("npm", "ci", "--dry-run", "--ignore-scripts", "--no-audit", "--no-fund");
    expect(ci.stderr).not.toMatch(/npm error/);
    expect(ci.status).toBe(0);
    // And no installed package's install script goes unapproved (npm skips those, or will).
    const scripts = pinnedIn(ROOT, ["npm", "install-scripts", "ls"]);
    expect(scripts.status).toBe(0);
    expect(scripts.stdout).toMatch(/No packages with unreviewed install scripts/);
  });

  it("replaces an older toolchain a machine already holds (the machine that hid the failure)", () => {
    const npmDir = join(home, ".cache", "node24", "node_modules", "npm");
    mkdirSync(npmDir, { recursive: true });
    writeFileSync(join(npmDir, "package.json"), JSON.stringify({ name: "npm", version: "11.0.0" }));
    const r = pinned("npm", "--version");
    expect(r.stderr).toContain("installing");
    expect(r.stdout.trim()).toBe(TOOLCHAIN.npm);
  });

  it("refuses a lock out of step with package.json, as CI then does", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    pkg.devDependencies["is-number"] = "7.0.0";
    writeFileSync(join(project, "package.json"), JSON.stringify(pkg));
    const ci = pinned("npm", "ci", "--dry-run", "--ignore-scripts", "--no-audit", "--no-fund");
    expect(ci.status).not.toBe(0);
    expect(ci.stderr).toMatch(/in sync/);
  });
});
