// The promptfoo CLI from npm, installed on first use into a cache outside the repo's dependencies
// (never a dependency of `npm install`), and K `promptfoo eval` processes run against one base URL.
// Offline and quiet: no cache, no telemetry, no update check, no sharing, results not written to
// its database; its config dir is a temporary one.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** The issue measured 0.123; 0.123.1 is the newest of it (and npm's latest) as this was written. */
export const PROMPTFOO_VERSION = process.env.BENCH_PROMPTFOO_VERSION ?? "0.123.1";

const cacheRoot = () => join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "slotgate-bench");

/** The CLI's entry point, installed with npm into ~/.cache/slotgate-bench/promptfoo-<version> when missing. */
export function promptfooBin(): string {
  const prefix = join(cacheRoot(), `promptfoo-${PROMPTFOO_VERSION}`);
  const bin = join(prefix, "node_modules", "promptfoo", "dist", "src", "entrypoint.js");
  if (existsSync(bin)) return bin;
  mkdirSync(prefix, { recursive: true });
  console.error(`bench: installing promptfoo@${PROMPTFOO_VERSION} into ${prefix} (first use; a few minutes)`);
  const npm = spawnSync("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", `promptfoo@${PROMPTFOO_VERSION}`], { stdio: ["ignore", "inherit", "inherit"] });
  if (npm.status !== 0 || !existsSync(bin)) throw new Error(`npm install promptfoo@${PROMPTFOO_VERSION} failed (exit ${npm.status}); the real-promptfoo shape needs it`);
  return bin;
}

export interface PromptfooRun {
  /** Tests promptfoo ran, and how many ended in an error (what its user sees). */
  tests: number;
  errors: number;
  /** First error messages, for the log. */
  errorSamples: string[];
  /** Spawn to the last process's exit, ms. */
  wallMs: number;
}

interface Output {
  results?: { stats?: { successes?: number; failures?: number; errors?: number }; results?: { error?: string | null }[] };
}

const env = (apiKey: string, configDir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  OPENAI_API_KEY: apiKey,
  PROMPTFOO_CONFIG_DIR: configDir,
  PROMPTFOO_DISABLE_TELEMETRY: "1",
  PROMPTFOO_DISABLE_UPDATE: "1",
  PROMPTFOO_DISABLE_SHARING: "1",
  PROMPTFOO_DISABLE_REMOTE_GENERATION: "true",
  PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION: "true",
  PROMPTFOO_SELF_HOSTED: "1",
  PROMPTFOO_LOG_LEVEL: "warn",
  NO_COLOR: "1",
  CI: "true",
});

function config(baseURL: string, model: string, maxTokens: number, process: number, tests: number): string {
  const lines = [
    "description: slotgate bench (real-promptfoo)",
    "prompts:",
    "  - 'Summarise the plot of {{play}} in one sentence. (#{{n}})'",
    "providers:",
    `  - id: openai:chat:${model}`,
    "    config:",
    `      apiBaseUrl: ${baseURL}`,
    `      max_tokens: ${maxTokens}`,
    "tests:",
  ];
  for (let i = 0; i < tests; i++) lines.push(`  - vars: { play: Hamlet, n: ${process * 1_000 + i} }`);
  return `${lines.join("\n")}\n`;
}

/**
 * K processes of `promptfoo eval -c <config> --max-concurrency C --no-cache`, each with M tests of
 * its own (distinct prompts), all on one API key and base URL, started together.
 */
export async function runPromptfoo(o: { baseURL: string; apiKey: string; model: string; maxTokens: number; k: number; m: number; c: number; timeoutMs?: number }): Promise<PromptfooRun> {
  const bin = promptfooBin();
  const dir = mkdtempSync(join(tmpdir(), "slotgate-bench-promptfoo-"));
  const started = Date.now();
  try {
    const runs = Array.from({ length: o.k }, (_, p) => {
      const cfg = join(dir, `p${p}.yaml`);
      const out = join(dir, `p${p}.json`);
      writeFileSync(cfg, config(o.baseURL, o.model, o.maxTokens, p, o.m));
      const args = [bin, "eval", "-c", cfg, "--max-concurrency", String(o.c), "--no-cache", "--no-write", "--no-share", "--no-table", "--no-progress-bar", "-o", out];
      const child = spawn(process.execPath, args, { cwd: dir, env: env(o.apiKey, join(dir, `config${p}`)), stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr!.on("data", (b: Buffer) => (stderr = (stderr + b.toString()).slice(-4_000)));
      const timer = setTimeout(() => child.kill("SIGKILL"), o.timeoutMs ?? 600_000);
      return new Promise<Output>((resolve, reject) =>
        child.once("close", (code) => {
          clearTimeout(timer);
          // It exits 100 when a test failed or errored; the output file says which.
          if (!existsSync(out)) return reject(new Error(`promptfoo eval exited ${code} without ${out}:\n${stderr}`));
          resolve(JSON.parse(readFileSync(out, "utf8")) as Output);
        }),
      );
    });
    const outputs = await Promise.all(runs);
    const results = outputs.flatMap((x) => x.results?.results ?? []);
    const errors = outputs.reduce((a, x) => a + (x.results?.stats?.errors ?? 0), 0);
    const errorSamples = [...new Set(results.map((r) => r.error).filter((e): e is string => !!e).map((e) => e.slice(0, 200)))].slice(0, 3);
    return { tests: results.length, errors, errorSamples, wallMs: Date.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
