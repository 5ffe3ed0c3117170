// Brings Node 24 from the npm registry when the machine's Node is too old for the project's
// commands, and runs a command with it first on PATH. Plain JavaScript that Node 18 and 20 can run.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { MIN_NODE_TEXT, chooseNode } from "./node-choice.mjs";

/** @typedef {Extract<ReturnType<typeof chooseNode>, { plain: false }>} Fallback */
/** @typedef {Record<string, string | undefined>} Env */

/** @param {string} line */
const say = (line) => process.stderr.write(`${line}\n`);

/**
 * The environment to run the project's commands in: `env` itself when this Node is new enough;
 * otherwise one with the fallback Node first on PATH, installed first if missing, and one line
 * saying so.
 * @param {Env} env
 * @returns {Env}
 */
export function projectNodeEnv(env = process.env) {
  const choice = chooseNode({ version: process.versions.node, platform: process.platform, arch: process.arch, home: homedir() });
  if (choice.plain) return env;
  // Set below: a command started with the fallback Node that still sees an old one must not loop.
  if (env.SLOTGATE_FALLBACK_NODE) {
    say(`Node ${process.versions.node} is too old and ${env.SLOTGATE_FALLBACK_NODE} did not take its place on PATH`);
    process.exit(1);
  }
  const why = `Node ${process.versions.node} is too old for wrangler and the .ts scripts (needs ${MIN_NODE_TEXT})`;
  if (existsSync(choice.exe)) {
    say(`${why}; using Node ${installedVersion(choice)} from ${choice.dir} (installed from the npm registry)`);
  } else {
    say(`${why}; installing ${choice.spec} from the npm registry into ${choice.dir} and using it`);
    install(choice, env);
  }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
  return { ...env, ...machineNpmConfig(env), SLOTGATE_FALLBACK_NODE: choice.exe, [pathKey]: choice.bin + delimiter + (env[pathKey] ?? "") };
}

/** @param {Fallback} choice */
function installedVersion(choice) {
  try {
    return JSON.parse(readFileSync(join(choice.bin, "..", "package.json"), "utf8")).version;
  } catch {
    return choice.spec;
  }
}

/**
 * @param {Fallback} choice
 * @param {Env} env
 */
function install(choice, env) {
  const args = ["install", "--prefix", choice.dir, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", choice.spec];
  // Under `npm run` or `npx`, use the very npm that started us; else whichever npm is on PATH.
  const npmCli = env.npm_execpath?.endsWith(".js") ? env.npm_execpath : null;
  const r = npmCli
    ? spawnSync(process.execPath, [npmCli, ...args], { stdio: ["ignore", "ignore", "inherit"], env })
    : spawnSync("npm", args, { stdio: ["ignore", "ignore", "inherit"], env, shell: process.platform === "win32" });
  if (r.status !== 0 || !existsSync(choice.exe)) {
    say(`could not install ${choice.spec} from the npm registry; install Node ${MIN_NODE_TEXT} (.nvmrc names 24) and run the command again`);
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
