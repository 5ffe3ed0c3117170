// Other gateways to run beside the one under test (`--against`, `--probe`): a snapshot of another
// commit or worktree, and "the probe", a copy of a tree whose limiter client grants every acquire
// in the Worker and sends nothing to the key's object. The probe is written over the copy only:
// nothing of it is in src/, so nothing of it can ship. Each is started like the main gateway.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
/** What a gateway needs of a tree to run under wrangler dev. */
const COPIED = ["src", "assets", "wrangler.toml", "tsconfig.json", "package.json"];

/** A tree to run: where it was copied to, the name its rows carry, and how to remove it. */
export interface Tree {
  root: string;
  name: string;
  /** A probe (its acquires granted in the Worker). */
  probe?: boolean;
  remove(): void;
}

/** `--against`: an existing directory (a worktree, a checkout), else a revision of this repository. */
export type Against = { dir: string } | { rev: string };

export function parseAgainst(arg: string, isDir: (p: string) => boolean = (p) => existsSync(join(p, "src"))): Against {
  const dir = resolve(arg);
  return isDir(dir) ? { dir } : { rev: arg };
}

const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

/**
 * A copy of `a` in a temporary directory: a directory's files as they are now (its commit and
 * whether src/ differs from it in the name), or a revision's as committed (`git archive`). Its
 * node_modules: its own when it has them, else this tree's (the same lock, or close enough to run).
 */
export function copyOf(a: Against): Tree {
  const root = mkdtempSync(join(tmpdir(), "slotgate-bench-tree-"));
  let name: string;
  let modules = join(ROOT, "node_modules");
  if ("dir" in a) {
    for (const entry of COPIED) if (existsSync(join(a.dir, entry))) cpSync(join(a.dir, entry), join(root, entry), { recursive: true });
    if (existsSync(join(a.dir, "node_modules"))) modules = join(a.dir, "node_modules");
    name = dirName(a.dir);
  } else {
    const tar = execFileSync("git", ["archive", "--format=tar", a.rev, ...COPIED], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
    execFileSync("tar", ["-x", "-C", root], { input: tar });
    name = treeName(git(ROOT, "rev-parse", "--short", `${a.rev}^{commit}`), false);
  }
  symlinkSync(modules, join(root, "node_modules"), "dir");
  return { root, name, remove: () => rmSync(root, { recursive: true, force: true }) };
}

export const treeName = (commit: string, dirty: boolean) => `${commit}${dirty ? "+" : ""}`;

/** A directory's name in the rows: its commit (`+` when its src/ differs), or, outside git, the directory's own name. */
function dirName(dir: string): string {
  try {
    return treeName(git(dir, "rev-parse", "--short", "HEAD"), git(dir, "status", "--porcelain", "--", "src", "wrangler.toml") !== "");
  } catch {
    return basename(dir);
  }
}

/**
 * What the probe replaces: the module and class every request's limiter comes from. A tree that
 * moved it needs these two names changed (the probe fails loudly rather than measure a gateway
 * that still asks its limiter).
 */
export const PROBED = { file: "src/proxy/limiter-client.ts", name: "LimiterClient" } as const;

/** The module written in place of PROBED.file: everything it exported, its class answering in the Worker. */
export function probeModule(moved: string): string {
  return `// Written by bench/trees.ts over a benchmark's copy of the tree, never into src/: the probe.
// Every acquire is granted here, with nothing sent to the key's object, and nothing said after.
export * from "./${moved}.ts";
import { ${PROBED.name} as Asked } from "./${moved}.ts";

export class ${PROBED.name} extends Asked {
  async acquire(req) {
    return { granted: true, leaseId: req.leaseId, waitedMs: 0, leaseTtlMs: 60_000, limit: 16 };
  }
  settle() {}
  async settleNow() {
    return undefined;
  }
  release() {}
  cancel() {}
  keepAlive() {
    return () => {};
  }
}
`;
}

/** Turns a copied tree into the probe of itself (the copy's own files only). */
export function probe(tree: Tree): Tree {
  const file = join(tree.root, PROBED.file);
  if (!existsSync(file) || !readFileSync(file, "utf8").includes(`export class ${PROBED.name} `))
    throw new Error(`the probe replaces class ${PROBED.name} of ${PROBED.file}, which ${tree.name} does not have: change PROBED in bench/trees.ts`);
  const moved = `${basename(file, ".ts")}.asked`;
  renameSync(file, join(dirname(file), `${moved}.ts`));
  writeFileSync(file, probeModule(moved));
  return { ...tree, name: probeName(tree.name), probe: true };
}

export const probeName = (tree: string) => `${tree} probe`;

/** This tree as it is now. */
export const here = (): Tree => copyOf({ dir: ROOT });

/** The trees to run beside this one: each of `against`, and with `probes` the probe of each (this one's first). */
export function besideTrees(against: readonly string[], probes: boolean): Tree[] {
  const of = (a: string) => copyOf(parseAgainst(a));
  return [...against.map(of), ...(probes ? [probe(here()), ...against.map((a) => probe(of(a)))] : [])];
}
