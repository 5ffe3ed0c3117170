// Shared by the batch command's tests: the runner in-process, the CLI as a child, stand-ins, files.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import type { BatchOptions, BatchSummary, OutputLine } from "../../../src/cli/types.ts";
import { startStandin } from "../../support/standin/index.ts";
import type { Standin, StandinOptions } from "../../support/standin/index.ts";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const BIN = join(ROOT, "bin/slotgate.mjs");
export const KEY = "sk-batch-test";

// The runner is loaded by path: its import graph reaches src/limiter/core.ts, whose parameter
// properties this tsconfig (erasableSyntaxOnly) refuses, so only its types module is imported statically.
const RUNNER = join(ROOT, "src/cli/batch.ts");
export async function runBatch(o: BatchOptions): Promise<BatchSummary> {
  const mod = (await import(RUNNER)) as { runBatch: (o: BatchOptions) => Promise<BatchSummary> };
  return mod.runBatch({ env: { OPENAI_API_KEY: KEY }, ...o });
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
export function onCleanup(c: () => Promise<void> | void): void {
  cleanups.push(c);
}

export async function standin(options: Partial<StandinOptions> = {}): Promise<Standin> {
  const s = await startStandin({ latencyMs: 5, ...options });
  onCleanup(() => s.close());
  return s;
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "slotgate-batch-"));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function chatLine(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    custom_id: id, method: "POST", url: "/v1/chat/completions",
    body: { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: `hello ${id}` }] },
    ...extra,
  };
}

/** Writes lines (objects are JSON-encoded, strings written as they are) and returns the path. */
export function writeInput(dir: string, lines: (Record<string, unknown> | string)[], name = "requests.jsonl"): string {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return path;
}

export function inputOf(n: number, prefix = "req"): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => chatLine(`${prefix}-${i}`));
}

export function readOutput(path: string): OutputLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as OutputLine);
}

/** custom_id → how many output lines name it. */
export function idCounts(lines: OutputLine[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const l of lines) m.set(l.custom_id, (m.get(l.custom_id) ?? 0) + 1);
  return m;
}

export function countLines(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").length : 0;
}

export interface Cli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `node bin/slotgate.mjs ...args` (in `cwd`, by default the clone) with only the given
 * credentials in its environment; `shell`: run `args[0]` as a command line in sh instead, as a user
 * pastes one.
 */
export function cli(args: string[], env: Record<string, string> = { OPENAI_API_KEY: KEY }, cwd = ROOT, shell = false): Cli {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.endsWith("_API_KEY")));
  const [file, argv] = shell ? ["sh", ["-c", args[0]!]] : [process.execPath, [BIN, ...args]];
  const child = spawn(file, argv, { cwd, env: { ...base, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

export async function until(cond: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
