// The dashboard is built into the Worker's static assets (assets/admin/) by scripts/dashboard.mjs:
// an edit to src/dashboard/ that was not rebuilt fails here.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generate, OUT_DIR } from "../../scripts/dashboard.mjs";

describe("the dashboard's built files", () => {
  it("are what their sources give (run npm run dashboard after editing src/dashboard)", async () => {
    for (const [name, text] of Object.entries(await generate())) expect(readFileSync(join(OUT_DIR, name), "utf8"), name).toBe(text);
  });

  it("are minified, load nothing but their own two files, and keep the token in a header only", () => {
    const js = readFileSync(join(OUT_DIR, "dashboard.js"), "utf8");
    // 13.9 KB before the spend chart, 15.3 KB with it; unminified it would be well over 25 KB.
    expect(js.length).toBeLessThan(18_000);
    expect(js).toContain("/admin/pools");
    expect(js).toContain("Bearer ");
    const html = readFileSync(join(OUT_DIR, "index.html"), "utf8");
    expect([...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(["/admin/dashboard.css", "/admin/dashboard.js"]);
    expect(html).not.toMatch(/<script>|<style>/);
  });
});
