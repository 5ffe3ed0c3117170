// Brings the pinned toolchain (Node 24 and npm) from the npm registry when the machine's Node is too
// old for the project's commands, or when CI asks for it, and runs a command with it first on PATH. Plain JavaScript that Node 18 and 20 can run.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { MIN_NODE_TEXT, TOOLCHAIN, chooseNode, isToolchain, sessionKey, sessionOf } from "./node-choice.mjs";

/** @typedef {Extract<ReturnType<typeof chooseNode>, { plain: false }>} Fallback */
/** @typedef {Record<string, string | undefined>} Env */

/** @param {string} line */
const say = (line) => process.stderr.write(`${line}\n`);

/**
 * The environment to run the project's commands in: `env` itself when this Node is new enough (and
 * the toolchain is not asked for by `pinned`); otherwise one with the toolchain's Node and npm first
 * on PATH, installed first if missing or of other versions, and one line saying so (once a shell:
 * firstInThisShell). `version`: the Node to decide for, this one's unless a test says otherwise.
 * @param {Env} env
 * @param {{ pinned?: boolean, version?: string }} [options]
 * @returns {Env}
 */
export function projectNodeEnv(env = process.env, { pinned = false, version = process.versions.node } = {}) {
  const choice = chooseNode({ version, platform: process.platform, arch: process.arch, home: homedir(), pinned });
  if (choice.plain) return env;
  // Set below: a command started on the toolchain runs as it is; one that still sees an old Node must not loop.
  if (env.SLOTGATE_FALLBACK_NODE) {
    if (process.execPath === env.SLOTGATE_FALLBACK_NODE) return env;
    say(`Node ${version} is too old and ${env.SLOTGATE_FALLBACK_NODE} did not take its place on PATH`);
    process.exit(1);
  }
  const tools = `Node ${TOOLCHAIN.node} and npm ${TOOLCHAIN.npm}`;
  const why = pinned
    ? `CI runs on the pinned toolchain (${tools})`
    : `Node ${version} is too old for wrangler and the .ts scripts (needs ${MIN_NODE_TEXT})`;
  if (isToolchain(installedVersions(choice), choice.pkg)) {
    // Once a shell is enough to know: CI's pinned runs say it every time, in their logs.
    if (pinned || firstInThisShell(choice.dir)) say(`${why}; using ${tools} from ${choice.dir} (installed from the npm registry)`);
  } else {
    say(`${why}; installing ${tools} from the npm registry into ${choice.dir} and using them`);
    install(choice, env);
    firstInThisShell(choice.dir);
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
  // npm does not pass a SIGTERM it is sent on to the script it runs: it exits and leaves the script
  // running with no parent (`kill <npm's pid>` on `npm test` left the tests, and their gateways,
  // going). So a parent that goes counts as a SIGTERM for the command.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    child.kill("SIGTERM");
  }, 500);
  watch.unref();
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

/**
 * True the first time it is asked in this shell (the terminal session: sessionKey), false after:
 * a marker file per shell in `<dir>/said/`, made with O_EXCL so two commands at once agree. Markers
 * of shells that have ended go when a new one is made. Without /proc (macOS, Windows) the parent
 * process stands for the shell, and its marker goes after a day. Anything failing here says the line again rather than hide it.
 * @param {string} dir the toolchain's folder
 */
export function firstInThisShell(dir) {
  const DAY_MS = 86_400_000;
  const said = join(dir, "said");
  const read = (/** @type {string} */ p) => {
    try {
      return readFileSync(p, "utf8");
    } catch {
      return null;
    }
  };
  const stat = read("/proc/self/stat");
  const sid = stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3];
  const key = sessionKey(stat, sid ? read(`/proc/${sid}/stat`) : null) ?? `parent-${process.ppid}`;
  try {
    mkdirSync(said, { recursive: true });
    for (const old of readdirSync(said)) {
      const s = sessionOf(old);
      // Our own session is live whatever its leader did (a CI runner's leader may have exited first).
      const ended = s !== null ? s !== sid && !existsSync(`/proc/${s}`) : Date.now() - statSync(join(said, old)).mtimeMs > DAY_MS;
      if (ended) rmSync(join(said, old), { force: true });
    }
    writeFileSync(join(said, key), "", { flag: "wx" });
    return true;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code !== "EEXIST";
  }
}
