// The shape the code keeps (issue 40): no source file under src/ past about 300 lines (one concern a
// file; past that it is split). Import circles: test/node/imports.test.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
/** "About 300": a file may run a little past while it reads as one concern; past this it is split. */
const MAX_LINES = 310;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("the source's shape", () => {
  it(`no file under src/ is longer than ${MAX_LINES} lines`, () => {
    const files = sources(join(ROOT, "src"));
    expect(files.length).toBeGreaterThan(100);
    const long = files
      .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, "utf8").split("\n").length }))
      .filter((f) => f.lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
