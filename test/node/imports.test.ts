// The import graph of src/ has no circle inside a folder (issue 40: a folder is a layer; a circle
// inside one means two files are one concern, or a type sits in the wrong file). Circles across
// folders through the type-only env.ts may stay. Reads src/ from disk, so it runs in the node project.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");

/** `import ... from "./x"` and `export ... from "./x"`, type-only too, over line breaks. */
const RELATIVE = /(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/g;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : []));
}

/** Each file's imports of files in its own folder. */
export function sameFolderGraph(paths: string[], read: (path: string) => string): Map<string, string[]> {
  const known = new Set(paths);
  const graph = new Map<string, string[]>();
  for (const path of paths) {
    const to = [...read(path).matchAll(RELATIVE)]
      .map((m) => join(dirname(path), m[1]!))
      .map((p) => [`${p}.ts`, `${p}.tsx`, join(p, "index.ts"), p].find((c) => known.has(c)))
      .filter((p): p is string => p !== undefined && dirname(p) === dirname(path));
    graph.set(path, to);
  }
  return graph;
}

/** The circles of a graph: its strongly connected parts of more than one file, or a file importing itself. */
export function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      part.push(w);
      if (w === v) break;
    }
    if (part.length > 1 || graph.get(v)!.includes(v)) found.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("src's imports", () => {
  it("finds a circle inside a folder, and none across folders or in a line", () => {
    const src: Record<string, string> = {
      "/s/a/x.ts": 'import { y } from "./y";\nimport type { E } from "../env";',
      "/s/a/y.ts": 'import type {\n  Z,\n} from "./z";',
      "/s/a/z.ts": 'export { x } from "./x";',
      "/s/a/w.ts": 'import { x } from "./x";',
      "/s/env.ts": 'import type { X } from "./a/x";',
    };
    const graph = sameFolderGraph(Object.keys(src), (p) => src[p]!);
    expect(circles(graph)).toEqual([["/s/a/x.ts", "/s/a/y.ts", "/s/a/z.ts"]]);
    src["/s/a/z.ts"] = 'import { e } from "../env";';
    expect(circles(sameFolderGraph(Object.keys(src), (p) => src[p]!))).toEqual([]);
  });

  it("has no circle inside a folder", () => {
    const graph = sameFolderGraph(files(SRC), (p) => readFileSync(p, "utf8"));
    expect(circles(graph).map((c) => c.map((p) => relative(ROOT, p)))).toEqual([]);
  });
});
