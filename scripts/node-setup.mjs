// Brings the pinned toolchain (Node 24 and npm) from the npm registry when the machine's Node is too
// old for the project's commands, or when CI asks for it, and runs a command with it first on PATH. Plain JavaScript that Node 18 and 20 can run.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { MIN_NODE_TEXT, TOOLCHAIN, chooseNode, isToolchain } from "./node-choice.mjs";

/** @typedef {Extract<ReturnType<typeof chooseNode>, { plain: false }>} Fallback */
/** @typedef {Record<string, string | undefined>} Env */

/** @param {string} line */
const say = (line) => process.stderr.write(`${line}\n`);

/**
 * The environment to run the project's commands in: `env` itself when this Node is new enough (and
 * the toolchain is not asked for by `pinned`); otherwise one with the toolchain's Node and npm first
 * on PATH, installed first if missing or of other versions, and one line saying so.
 * @param {Env} env
 * @param {{ pinned?: boolean }} [options]
 * @returns {Env}
 */
export function projectNodeEnv(env = process.env, { pinned = false } = {}) {
  const choice = chooseNode({ version: process.versions.node, platform: process.platform, arch: process.arch, home: homedir(), pinned });
  if (choice.plain) return env;
  // Set below: a command started on the toolchain runs as it is; one that still sees an old Node must not loop.
  if (env.SLOTGATE_FALLBACK_NODE) {
    if (process.execPath === env.SLOTGATE_FALLBACK_NODE) return env;
    say(`Node ${process.versions.node} is too old and ${env.SLOTGATE_FALLBACK_NODE} did not take its place on PATH`);
    process.exit(1);
  }
  const tools = `Node ${TOOLCHAIN.node} and npm ${TOOLCHAIN.npm}`;
  const why = pinned
    ? `CI runs on the pinned toolchain (${tools})`
    : `Node ${process.versions.node} is too old for wrangler and the .ts scripts (needs ${MIN_NODE_TEXT})`;
  if (isToolchain(installedVersions(choice), choice.pkg)) {
    say(`${why}; using ${tools} from ${choice.dir} (installed from the npm registry)`);
  } else {
    say(`${why}; installing ${tools} from the npm registry into ${choice.dir} and using them`);
    install(choice, env);
  }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
  return { ...env, ...machineNpmConfig(env), SLOTGATE_FALLBACK_NODE: choice.exe, [pathKey]: [...choice.bins, env[pathKey] ?? ""].join(delimiter) };
}

/**
 * The version of each toolchain package `choice.dir` holds, null where it holds none.
 * @param {Fallback} choice
 * @returns {Record<string, string | null>}
 */
function installedVersions(choice) {
  /** @param {string} name */
  const version = (name) => {
    try {
      return JSON.parse(readFileSync(join(choice.dir, "node_modules", name, "package.json"), "utf8")).version;
    } catch {
      return null;
    }
  };
  return { [choice.pkg]: existsSync(choice.exe) ? version(choice.pkg) : null, npm: version("npm") };
}

/**
 * @param {Fallback} choice
 * @param {Env} env
 */
function install(choice, env) {
  // Whatever is there is not the toolchain: start clean, so npm's own record of it cannot keep it.
  rmSync(join(choice.dir, "node_modules"), { recursive: true, force: true });
  const args = ["install", "--prefix", choice.dir, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", ...choice.specs];
  // Under `npm run` or `npx`, use the very npm that started us; else whichever npm is on PATH.
  const npmCli = env.npm_execpath?.endsWith(".js") ? env.npm_execpath : null;
  const r = npmCli
    ? spawnSync(process.execPath, [npmCli, ...args], { stdio: ["ignore", "ignore", "inherit"], env })
    : spawnSync("npm", args, { stdio: ["ignore", "ignore", "inherit"], env, shell: process.platform === "win32" });
  if (r.status !== 0 || !isToolchain(installedVersions(choice), choice.pkg)) {
    say(`could not install ${choice.specs.join(" and ")} from the npm registry; install Node ${MIN_NODE_TEXT} (.nvmrc names 24) and run the command again`);
    process.exit(1);
  }
}

/**
 * npm run by another Node reads its global npmrc under that Node's directory, not this one's
 * (/usr/etc/npmrc for /usr/bin/node): point it at this one's so the machine's CA bundle, proxy and
 * registry still apply. `npm run` already passes it on; a plain `node` start does not.
 * @param {Env} env
 */
function machineNpmConfig(env) {
  if (env.npm_config_globalconfig) return {};
  const npmrc = join(dirname(dirname(process.execPath)), "etc", "npmrc");
  return existsSync(npmrc) ? { npm_config_globalconfig: npmrc } : {};
}

/**
 * Runs `command` with `args` in `env`, passing the terminal through, and ends this process the way
 * the command ended (its exit code, or the signal that stopped it).
 * @param {string} command
 * @param {string[]} args
 * @param {Env} env
 */
export function runAndExit(command, args, env) {
  const child = spawn(command, args, { stdio: "inherit", env, shell: process.platform === "win32" });
  // Ctrl-C reaches the whole foreground group, the command included: let it decide. A signal sent
  // to this process alone (kill <pid>) is passed on.
  process.on("SIGINT", () => {});
  for (const signal of /** @type {const} */ (["SIGTERM", "SIGHUP"])) process.on(signal, () => child.kill(signal));
  child.on("error", (err) => {
    say(`${command}: ${err.message}`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
