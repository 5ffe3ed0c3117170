// The trees a benchmark runs beside this one (bench/trees.ts): another revision as committed, and
// the probe, whose limiter client grants every acquire in the Worker. The probe is checked by
// loading what it writes over a tree's client and asking it for a slot.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { copyOf, parseAgainst, PROBED, probe, type Tree } from "../../bench/trees.ts";

const made: string[] = [];
afterAll(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A tree whose limiter client throws on every call: the real one would call its object. */
function fakeTree(client: string): Tree {
  const root = mkdtempSync(join(tmpdir(), "slotgate-bench-trees-test-"));
  made.push(root);
  mkdirSync(join(root, "src/proxy"), { recursive: true });
  writeFileSync(join(root, PROBED.file), client);
  return { root, name: "abc1234", remove: () => rmSync(root, { recursive: true, force: true }) };
}

const CLIENT = `export class LimiterUnavailable extends Error {}
export const GRACE_MS = 2000;
export class LimiterClient {
  constructor(ns, meta) { this.meta = meta; }
  async acquire() { throw new Error("asked the object"); }
  settle() { throw new Error("asked the object"); }
  release() { throw new Error("asked the object"); }
  keepAlive() { throw new Error("asked the object"); }
}
`;

describe("parseAgainst", () => {
  it("reads a directory with a src/ as a tree as it is now, anything else as a revision", () => {
    expect(parseAgainst("/tmp/base", (p) => p === "/tmp/base")).toEqual({ dir: "/tmp/base" });
    expect(parseAgainst("b2ddb70", () => false)).toEqual({ rev: "b2ddb70" });
  });
});

describe("probe", () => {
  it("grants every acquire without asking, and says nothing after, while the module exports all it did", async () => {
    const tree = probe(fakeTree(CLIENT));
    expect(tree).toMatchObject({ name: "abc1234 probe", probe: true });
    expect(existsSync(join(tree.root, "src/proxy/limiter-client.asked.ts"))).toBe(true);
    const m = await import(pathToFileURL(join(tree.root, PROBED.file)).href);
    const client = new m.LimiterClient({}, { key: "openai:gpt-4o-mini:0123" });
    await expect(client.acquire({ leaseId: "r:1", cost: 10, retry: false }, Date.now() + 1_000)).resolves.toMatchObject({ granted: true, leaseId: "r:1", waitedMs: 0 });
    expect(() => client.settle("r:1", {})).not.toThrow();
    expect(() => client.release("r:1")).not.toThrow();
    expect(client.keepAlive("r:1", 60_000)()).toBeUndefined();
    expect(new m.LimiterUnavailable("x")).toBeInstanceOf(Error);
    expect(m.GRACE_MS).toBe(2000);
  });

  it("refuses a tree whose client moved rather than measure a gateway that still asks its limiter", () => {
    expect(() => probe(fakeTree("export class SlotClient {}\n"))).toThrow(/PROBED in bench\/trees.ts/);
  });
});

describe("copyOf", () => {
  it("copies a revision as committed, named by its short hash", () => {
    const tree = copyOf({ rev: "b2ddb70" });
    made.push(tree.root);
    expect(tree.name).toBe("b2ddb70");
    expect(readFileSync(join(tree.root, "wrangler.toml"), "utf8")).toContain('main = "src/index.ts"');
    expect(existsSync(join(tree.root, PROBED.file))).toBe(true);
    expect(existsSync(join(tree.root, "node_modules"))).toBe(true);
  });
});
