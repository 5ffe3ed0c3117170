import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SCHEMA } from "../../src/usage/schema";

describe("the ledger's migration", () => {
  it("creates the table the limiters create on their first write, and nothing else", () => {
    const sql = readFileSync(new URL("../../migrations/0001_usage.sql", import.meta.url), "utf8");
    const statements = sql.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("--"));
    expect(statements).toEqual([`${SCHEMA};`]);
  });
});
