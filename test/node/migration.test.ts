import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../src/usage/schema";

const DIR = new URL("../../migrations/", import.meta.url);

describe("the ledger's migrations", () => {
  it("are the files the code knows, in order", () => {
    expect(readdirSync(DIR).filter((f) => f.endsWith(".sql")).sort()).toEqual(Object.keys(MIGRATIONS));
  });

  it("each creates the tables the limiters create on their first write, and nothing else", () => {
    for (const [file, statements] of Object.entries(MIGRATIONS)) {
      const sql = readFileSync(new URL(file, DIR), "utf8");
      const lines = sql.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("--"));
      expect(lines, file).toEqual(statements.map((s) => `${s};`));
    }
  });
});
