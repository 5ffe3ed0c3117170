// The workers tests' copy of wrangler.toml, in a folder of its own. Given a config file, wrangler
// reads `.dev.vars` (or, without one, `.env`) from the folder that holds it and lays those values
// over the config's vars and the tests' own bindings (`getVarsForDev`, wrangler 4.164): a developer's
// GATEWAY_TOKENS or MAX_ATTEMPTS in the clone's `.dev.vars` would change what the tests see. The
// copy lives where no such file is, with its paths made absolute, so the tests see wrangler.toml
// and the bindings vitest.config.ts gives them, and nothing else.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

/** The keys of wrangler.toml that name a path, relative to the file. */
const PATH_KEYS = ["main", "directory", "migrations_dir"];

/** wrangler.toml's text with every path key's value made absolute against `root`. */
export function absolutePaths(toml: string, root: string): string {
  const line = new RegExp(`^(\\s*(?:${PATH_KEYS.join("|")})\\s*=\\s*)"([^"]*)"`, "gm");
  return toml.replace(line, (_, key: string, path: string) => `${key}${JSON.stringify(isAbsolute(path) ? path : resolve(root, path))}`);
}

/**
 * Writes the copy of `root`/wrangler.toml into `dir` (created if missing; nothing else goes there)
 * and returns its path, for `cloudflareTest({ wrangler: { configPath } })`.
 */
export function isolatedWranglerConfig(root: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "wrangler.toml");
  const text = `# Written by test/support/wrangler-config.ts from ${join(root, "wrangler.toml")} for the workers tests: edit that one.\n${absolutePaths(readFileSync(join(root, "wrangler.toml"), "utf8"), root)}`;
  writeFileSync(path, text);
  return path;
}
