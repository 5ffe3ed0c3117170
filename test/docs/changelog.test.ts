// CHANGELOG.md and the package's version move together: the newest dated version is the one
// package.json and package-lock.json carry, versions are in order with their dates, the top section
// is Unreleased, and every breaking change comes with the steps to upgrade.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

interface Section {
  version: string;
  date: string | null;
  body: string;
}

/** The `## [...]` sections of a Keep a Changelog file, in file order. */
export function sections(text: string): Section[] {
  const heads = [...text.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\s*$/gm)];
  return heads.map((m, i) => ({ version: m[1]!, date: m[2] ?? null, body: text.slice(m.index! + m[0].length, heads[i + 1]?.index ?? text.length) }));
}

const semver = (v: string) => v.split(".").map(Number) as [number, number, number];
const newer = (a: string, b: string) => {
  const [x, y] = [semver(a), semver(b)];
  return x[0] !== y[0] ? x[0] > y[0] : x[1] !== y[1] ? x[1] > y[1] : x[2] > y[2];
};

describe("the checks", () => {
  it("read sections, dates and order", () => {
    const s = sections("# C\n\n## [Unreleased]\n\nx\n\n## [0.2.0] - 2026-01-02\n\ny\n## [0.1.0] - 2026-01-01\nz\n");
    expect(s.map((x) => [x.version, x.date])).toEqual([["Unreleased", null], ["0.2.0", "2026-01-02"], ["0.1.0", "2026-01-01"]]);
    expect(s[1]!.body.trim()).toBe("y");
    expect(newer("0.10.0", "0.9.3")).toBe(true);
    expect(newer("0.9.3", "0.10.0")).toBe(false);
  });
});

describe("CHANGELOG.md", () => {
  const all = sections(read("CHANGELOG.md"));
  const released = all.filter((s) => s.version !== "Unreleased");

  it("opens with Unreleased, then dated versions, newest first", () => {
    expect(all[0]?.version).toBe("Unreleased");
    expect(released.length).toBeGreaterThan(1);
    for (const s of released) {
      expect(s.version).toMatch(/^\d+\.\d+\.\d+$/);
      expect(s.date, s.version).not.toBeNull();
    }
    for (let i = 1; i < released.length; i++) {
      expect(newer(released[i - 1]!.version, released[i]!.version), `${released[i - 1]!.version} before ${released[i]!.version}`).toBe(true);
      expect(released[i - 1]!.date! >= released[i]!.date!).toBe(true);
    }
  });

  it("its newest version is the package's (package.json and the lock): a release moves both", () => {
    const newest = released[0]!.version;
    expect(JSON.parse(read("package.json")).version).toBe(newest);
    const lock = JSON.parse(read("package-lock.json"));
    expect(lock.version).toBe(newest);
    expect(lock.packages[""].version).toBe(newest);
  });

  it("says how to upgrade wherever it says Breaking, step by step", () => {
    for (const s of all.filter((x) => x.body.includes("**Breaking:**"))) {
      const upgrading = s.body.split("### Upgrading")[1];
      expect(upgrading, `${s.version} has breaking changes and no Upgrading section`).toBeDefined();
      expect(upgrading!).toMatch(/^1\. /m);
    }
  });
});
