// How the user can run this command again from where they are: the command a printed hint starts
// with. `slotgate` only when the user's shell finds this same command under that name (npm link, a
// symlink of their own); otherwise Node and this file's absolute path, which works from any folder.
// npx and npm put the project's node_modules/.bin on the PATH of the process they start, never on
// the user's shell's: those folders do not count.
import { realpathSync } from "node:fs";
import { delimiter, join } from "node:path";

export interface Invocation {
  /** This command's file (bin/slotgate.mjs), absolute. */
  bin: string;
  /** The PATH the process runs with. */
  path: string;
  /** A path with every link followed; null when there is nothing there. */
  realpath: (p: string) => string | null;
}

/** Folders npm and npx add to a child's PATH (any node_modules/.bin, npm's node-gyp-bin): not the user's shell's. */
const ADDED_BY_NPM = /[\\/](node_modules[\\/]\.bin|node-gyp-bin)[\\/]?$/;

/** A word the shell reads as it is; anything else single-quoted. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The start of a command line that runs this command again, as the user would type it. */
export function commandName(i: Invocation): string {
  const me = i.realpath(i.bin);
  for (const dir of i.path.split(delimiter)) {
    if (!dir || ADDED_BY_NPM.test(dir)) continue;
    if (me !== null && i.realpath(join(dir, "slotgate")) === me) return "slotgate";
  }
  return `node ${shellWord(i.bin)}`;
}

/** The real thing: this process's PATH and file system. */
export function thisInvocation(bin: string): Invocation {
  return {
    bin,
    path: process.env.PATH ?? "",
    realpath: (p) => {
      try {
        return realpathSync(p);
      } catch {
        return null;
      }
    },
  };
}
