// What the README and docs tell a reader to run or read is true of this project: no command runs
// anything but its own CLI, the README's Deploy block sets the secrets the deploy guide sets before a
// first deploy, and the operating guide's metrics table names every class and reason the exposition
// writes. (The printed commands themselves are run in test/e2e/dayone.test.ts.)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

/** Every Markdown file a reader is pointed at, and the files that print commands for them. */
function readerFiles(): string[] {
  const out = readdirSync(ROOT).filter((n) => n.endsWith(".md"));
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".md")) out.push(path);
    }
  };
  walk("docs");
  return [...out, ".dev.vars.example", "test/support/standin/README.md", "scripts/demo.ts", "src/cli/main.ts", "src/cli/invoked.ts", "bin/slotgate.mjs"];
}

/** The lines of the first fenced block after `heading` (a line of the file). */
function blockAfter(text: string, heading: string): string[] {
  const from = text.indexOf(`\n${heading}\n`);
  if (from === -1) throw new Error(`no heading ${heading}`);
  const open = text.indexOf("```", from);
  const body = text.indexOf("\n", open) + 1;
  return text.slice(body, text.indexOf("```", body)).split("\n");
}

describe("commands a reader is given", () => {
  it("never run this project's CLI through npx (which would fetch whatever the registry holds under its name)", () => {
    const found = readerFiles().flatMap((f) => read(f).split("\n").map((line, i) => ({ f, i, line })))
      .filter(({ line }) => /\bnpx\s+(-\S+\s+)*slotgate\b/.test(line))
      .map(({ f, i, line }) => `${f}:${i + 1}: ${line.trim()}`);
    expect(found).toEqual([]);
    expect(readerFiles().every((f) => existsSync(join(ROOT, f)))).toBe(true);
  });

  it("the README's Deploy block sets every secret the deploy guide sets before a first deploy (a pool's aside)", () => {
    const puts = (lines: string[]) => lines.map((l) => /secret put (\w+)/.exec(l)).filter((m) => m !== null).map((m) => ({ name: m[1]!, line: m.input }));
    const guide = puts(blockAfter(read("docs/deploying.md"), "## 3. Set the secrets, before the first deploy"))
      .filter(({ line }) => !/optional|pool member/.test(line)).map(({ name }) => name);
    expect(guide).toEqual(["ADMIN_TOKEN", "GATEWAY_TOKENS", "VIRTUAL_KEY_SECRET"]);
    const readme = puts(blockAfter(read("README.md"), "## Deploy")).map(({ name }) => name);
    expect(readme).toEqual(expect.arrayContaining(guide));
  });
});

describe("the operating guide's metrics table", () => {
  it("names every class and reason the exposition writes", async () => {
    // By path: the counters' module is the Worker's (its types reach files this tsconfig does not take).
    const counters = (await import(join(ROOT, "src/limiter/counters.ts"))) as { OUTCOME_CLASSES: string[]; RETRY_CLASSES: string[]; CHANGE_REASONS: string[] };
    const table = read("docs/operating.md").split("\n");
    const row = (family: string) => table.find((l) => l.startsWith(`| \`${family}`)) ?? "";
    const named = (line: string) => new Set([...line.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    expect(counters.OUTCOME_CLASSES.filter((c) => !named(row("slotgate_requests_total")).has(c))).toEqual([]);
    expect(counters.RETRY_CLASSES.filter((c) => !named(row("slotgate_retries_total")).has(c))).toEqual([]);
    expect(counters.CHANGE_REASONS.filter((c) => !named(row("slotgate_limit_changes_total")).has(c))).toEqual([]);
  });

  it("names every family the exposition writes", () => {
    const src = ["src/observe/prometheus.ts", "src/observe/genai.ts", "src/observe/upstream.ts", "src/routes/metrics.ts"].filter((f) => existsSync(join(ROOT, f)));
    const families = new Set(src.flatMap((f) => [...read(f).matchAll(/"(slotgate_[a-z_]+)"/g)].map((m) => m[1]!)));
    expect(families.size).toBeGreaterThan(20);
    const guide = read("docs/operating.md");
    expect([...families].filter((f) => !guide.includes(f)).map((f) => `${f} (${relative(ROOT, join(ROOT, "docs/operating.md"))})`)).toEqual([]);
  });
});
