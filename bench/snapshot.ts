// wrangler dev rebuilds and restarts the Worker whenever a source file changes, and other people
// edit this tree while the benchmark runs. So the gateway runs from a copy of the tree taken when
// the run starts: every figure is from one version of the code, and no reload lands mid-scenario.
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const COPIED = ["src", "assets", "wrangler.toml", "tsconfig.json", "package.json"];

export function snapshot(): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), "slotgate-bench-src-"));
  for (const entry of COPIED) cpSync(join(ROOT, entry), join(root, entry), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"), "dir");
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
