// The variants bench/points.ts cuts the probe with (bench/variants.ts): each must still find its
// anchor in src/ exactly once, or its figures would be the plain probe's under another name, and
// what it writes must still be TypeScript that builds.
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { transformSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { applyVariant, patchesOf, VARIANTS } from "../../bench/variants.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of src/ to write over. */
function srcCopy(): string {
  const root = mkdtempSync(join(tmpdir(), "slotgate-bench-variants-test-"));
  made.push(root);
  cpSync(join(ROOT, "src"), join(root, "src"), { recursive: true });
  return root;
}

describe("bench variants", () => {
  it.each(VARIANTS.filter((v) => v !== "probe"))("%s changes the files it names, and they still build", (variant) => {
    const root = srcCopy();
    applyVariant(root, variant);
    for (const file of new Set(patchesOf(variant).map((p) => p.file))) {
      const text = readFileSync(join(root, file), "utf8");
      expect(text).not.toBe(readFileSync(join(ROOT, file), "utf8"));
      expect(() => transformSync(text, { loader: "ts" })).not.toThrow();
    }
  });

  it("cuts the list after the stage it names, and refuses a stage the list does not have", () => {
    const root = srcCopy();
    applyVariant(root, "after:body");
    expect(readFileSync(join(root, "src/routes/proxy.ts"), "utf8")).toMatch(/\n  body, short as never, \/\/ the body/);
    expect(() => applyVariant(srcCopy(), "after:nowhere")).toThrow(/has no/);
    expect(() => patchesOf("faster")).toThrow(/no variant faster/);
  });
});
