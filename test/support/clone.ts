// A stand-in for a developer's clone: a fresh folder whose project files are links to this clone's,
// so a test can put a `.dev.vars` (or anything a developer keeps there) beside them without touching
// the real clone.
import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const LINKED = ["wrangler.toml", "package.json", "src", "assets", "migrations", "node_modules", "scripts", "bin", "test", "examples"];

/** Makes the folder (under `parent`, default the system's temporary folder) and returns its path; the caller removes it. */
export function linkedClone(parent = tmpdir()): string {
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "slotgate-clone-"));
  for (const name of LINKED) symlinkSync(join(ROOT, name), join(dir, name));
  return dir;
}
