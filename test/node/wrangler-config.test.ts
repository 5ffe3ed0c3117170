// The workers tests' copy of wrangler.toml (test/support/wrangler-config.ts): wrangler reads it as it
// reads the clone's own, and a `.dev.vars` beside the clone's file never reaches the tests.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { unstable_getMiniflareWorkerOptions, unstable_readConfig } from "wrangler";
import { afterAll, describe, expect, it } from "vitest";
import { absolutePaths, isolatedWranglerConfig } from "../support/wrangler-config.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const scratch = mkdtempSync(join(tmpdir(), "slotgate-wrangler-config-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The bindings `wrangler dev` and the vitest plugin would give a Worker from this config (wrangler's "Using secrets" line kept quiet). */
function bindingsOf(configPath: string): string[] {
  const level = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "warn";
  try {
    return Object.keys((unstable_getMiniflareWorkerOptions(configPath).workerOptions as { bindings?: Record<string, unknown> }).bindings ?? {});
  } finally {
    if (level === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = level;
  }
}

describe("the workers tests' wrangler config", () => {
  it("makes every path absolute and leaves the rest as written", () => {
    const toml = 'main = "src/index.ts"\n[assets]\ndirectory = "./assets"\n[[d1_databases]]\nmigrations_dir = "migrations"\nname = "src/not-a-path"\n';
    expect(absolutePaths(toml, "/clone")).toBe('main = "/clone/src/index.ts"\n[assets]\ndirectory = "/clone/assets"\n[[d1_databases]]\nmigrations_dir = "/clone/migrations"\nname = "src/not-a-path"\n');
  });

  it("is what wrangler reads from the clone's own: the same entry, assets, migrations, bindings and vars", () => {
    const copy = isolatedWranglerConfig(ROOT, join(scratch, "copy"));
    const [own, isolated] = [join(ROOT, "wrangler.toml"), copy].map((c) => unstable_readConfig({ config: c }));
    expect(isolated.main).toBe(own.main);
    expect(isolated.assets?.directory && resolve(isolated.configPath!, "..", isolated.assets.directory)).toBe(own.assets?.directory && resolve(own.configPath!, "..", own.assets.directory));
    expect(isolated.d1_databases.map((d: { migrations_dir?: string }) => resolve(isolated.configPath!, "..", d.migrations_dir!))).toEqual(own.d1_databases.map((d: { migrations_dir?: string }) => resolve(own.configPath!, "..", d.migrations_dir!)));
    for (const field of ["name", "compatibility_date", "compatibility_flags", "durable_objects", "migrations", "r2_buckets", "vars", "observability"] as const) {
      expect(isolated[field], field).toEqual(own[field]);
    }
  });

  it("never takes a .dev.vars that sits beside the clone's wrangler.toml (which the clone's own would)", () => {
    const clone = join(scratch, "clone");
    isolatedWranglerConfig(ROOT, clone); // only to make the folder: replaced by the clone's file below
    copyFileSync(join(ROOT, "wrangler.toml"), join(clone, "wrangler.toml"));
    writeFileSync(join(clone, ".dev.vars"), "GATEWAY_TOKENS=a-developers-own\nMAX_ATTEMPTS=1\n");
    expect(bindingsOf(join(clone, "wrangler.toml"))).toEqual(expect.arrayContaining(["GATEWAY_TOKENS"]));
    const isolated = bindingsOf(isolatedWranglerConfig(clone, join(scratch, "isolated")));
    expect(isolated).not.toContain("GATEWAY_TOKENS");
    expect(isolated).toContain("MAX_ATTEMPTS"); // wrangler.toml's own var, as written there
  });
});
