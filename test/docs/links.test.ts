// Every Markdown link in the repository's root and docs/ resolves: a relative link names a file or
// folder that exists inside the repository, and a `#anchor` names a heading of the target (GitHub's
// slugs). Runs in the node project: `npx vitest run --project node test/docs/links.test.ts`.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** The Markdown files checked: *.md at the root and anywhere under docs/. */
function markdownFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, deep: boolean) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        if (deep) walk(path, true);
      } else if (name.endsWith(".md")) {
        found.push(path);
      }
    }
  };
  walk(root, false);
  if (existsSync(join(root, "docs"))) walk(join(root, "docs"), true);
  return found.sort();
}

/** The text outside fenced code blocks, with inline code blanked (links there are not links). */
function prose(text: string): string[] {
  const lines = text.split("\n");
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1]![0]!;
      else if (m[1]![0] === fence) fence = null;
      out.push("");
      continue;
    }
    out.push(fence === null ? line.replace(/`[^`]*`/g, (s) => " ".repeat(s.length)) : "");
  }
  return out;
}

/**
 * GitHub's anchor for a heading's text: inline Markdown dropped (code marks, emphasis, links to
 * their text), lowercased, every character but letters, digits, `_`, `-` and spaces removed,
 * spaces to hyphens.
 */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown text: its headings' slugs (repeats get -1, -2, ...) and HTML ids. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const lines = text.split("\n");
  let fence: string | null = null;
  for (const line of lines) {
    const f = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1]![0]!;
      else if (f[1]![0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) out.add(a[1]!);
  }
  return out;
}

/** Each link target in a Markdown text, with its line: inline links, images and definitions. */
export function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  prose(text).forEach((line, i) => {
    for (const m of line.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
    const def = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (def) out.push({ line: i + 1, target: def[1]! });
  });
  return out;
}

/**
 * What is wrong with the links of `files` (paths to their texts), as "file:line: target: why".
 * `read` gives a file's text (the tests pass a table instead of the disk).
 */
export function brokenLinks(root: string, files: string[], read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (path: string) => {
    let a = anchorCache.get(path);
    if (!a) {
      a = anchors(read(path) ?? "");
      anchorCache.set(path, a);
    }
    return a;
  };
  for (const file of files) {
    const text = read(file);
    if (text === null) continue;
    for (const { line, target } of links(text)) {
      const where = `${relative(root, file)}:${line}: ${target}`;
      if (target === "") {
        problems.push(`${where}: empty link`);
        continue;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: and the like
      const hash = target.indexOf("#");
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === "" ? file : resolve(dirname(file), pathPart);
      if (dest !== root && !dest.startsWith(root + sep)) {
        problems.push(`${where}: points outside the repository`);
        continue;
      }
      if (read(dest) === null && !isDir(dest)) {
        problems.push(`${where}: no such file`);
        continue;
      }
      if (anchor !== null && dest.endsWith(".md") && !anchorsOf(dest).has(anchor)) {
        problems.push(`${where}: no heading with the anchor #${anchor} in ${relative(root, dest)}`);
      }
    }
  }
  return problems;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readDisk(path: string): string | null {
  try {
    return statSync(path).isFile() ? readFileSync(path, "utf8") : null;
  } catch {
    return null;
  }
}

describe("the checker", () => {
  it("makes GitHub's slugs", () => {
    expect(slug("Run it")).toBe("run-it");
    expect(slug("`GET /admin/keys/:key`")).toBe("get-adminkeyskey");
    expect(slug("Key pools and virtual keys (issue 19)")).toBe("key-pools-and-virtual-keys-issue-19");
    expect(slug("Measured through `wrangler dev`, with the simulator's figure")).toBe("measured-through-wrangler-dev-with-the-simulators-figure");
    expect(slug("Provider batches: the same job at half the price")).toBe("provider-batches-the-same-job-at-half-the-price");
    expect(slug("`slotgate batch`")).toBe("slotgate-batch");
    expect(slug("LIMITER_LOCATION and the [design](design.md)")).toBe("limiter_location-and-the-design");
  });

  it("numbers repeated headings and skips headings in code", () => {
    const a = anchors("# Notes\n## Notes\n```\n# Notes\n```\n### Notes\n");
    expect([...a].sort()).toEqual(["notes", "notes-1", "notes-2"]);
  });

  it("reports a missing file, a missing anchor and a path out of the repository, and passes good links", () => {
    const root = "/repo";
    const texts: Record<string, string> = {
      "/repo/README.md": [
        "# Title",
        "See [the guide](docs/guide.md#the-part) and [here](#title).",
        "Broken: [gone](docs/gone.md), [no part](docs/guide.md#no-such-part), [self](#nothing).",
        "Out: [shared](../shared/notes.md). Web: [site](https://example.com/#x).",
        "`[not a link](nowhere.md)`",
        "```",
        "[also not](nowhere.md)",
        "```",
      ].join("\n"),
      "/repo/docs/guide.md": "# Guide\n## The part\n[back](../README.md#title)\n",
    };
    const problems = brokenLinks(root, Object.keys(texts), (p) => texts[p] ?? null);
    expect(problems).toEqual([
      "README.md:3: docs/gone.md: no such file",
      "README.md:3: docs/guide.md#no-such-part: no heading with the anchor #no-such-part in docs/guide.md",
      "README.md:3: #nothing: no heading with the anchor #nothing in README.md",
      "README.md:4: ../shared/notes.md: points outside the repository",
    ]);
  });
});

describe("the repository's Markdown", () => {
  const files = markdownFiles(ROOT);

  it("has the README and the guides", () => {
    const names = files.map((f) => relative(ROOT, f));
    expect(names).toContain("README.md");
    expect(names).toContain(join("docs", "contract.md"));
    expect(names.filter((n) => n.startsWith(`docs${sep}`)).length).toBeGreaterThan(2);
  });

  it("links only to files that exist and headings that are there", () => {
    expect(brokenLinks(ROOT, files, readDisk)).toEqual([]);
  });
});
