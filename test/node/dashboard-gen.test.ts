// The dashboard's client JS is minified into src/dashboard/client.gen.ts by scripts/dashboard.mjs:
// an edit to src/dashboard/client/*.js that was not regenerated fails here.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { generate, OUT } from "../../scripts/dashboard.mjs";

describe("the dashboard's generated client", () => {
  it("is what its sources give (run npm run dashboard after editing src/dashboard/client)", () => {
    expect(readFileSync(OUT, "utf8")).toBe(generate());
  });

  it("is minified, and still carries the client's behaviour (the token only in a header)", () => {
    const text = readFileSync(OUT, "utf8");
    expect(text.length).toBeLessThan(16_000);
    expect(text).toContain("/admin/pools");
    expect(text).toContain("Bearer ");
  });
});
