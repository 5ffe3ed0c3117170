// Shared by the end-to-end tests: one stand-in and one `wrangler dev` gateway per file, the
// official SDKs pointed at the gateway, and client processes that share one key.
import Anthropic from "@anthropic-ai/sdk";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, expect } from "vitest";
import { type Gateway, type GatewayOptions, startGateway } from "../support/gateway.ts";
import { type Attempt, type Standin, type StandinOptions, type Stats, startStandin } from "../support/standin/index.ts";
import type { ClientResult, ClientSpec } from "./client.ts";

export type { ClientResult } from "./client.ts";

export const OPENAI_MODEL = "gpt-4o-mini";
export const ANTHROPIC_MODEL = "claude-haiku-4-5";
export const ADMIN_TOKEN = "e2e-admin-token";

export interface Stack {
  standin: Standin;
  gateway: Gateway;
}

export interface StackOptions {
  standin?: Partial<StandinOptions>;
  /** Gateway vars (DEADLINE_MS, BASE_BACKOFF_MS, START_CONCURRENCY, ...); a function gets the stand-in's URL (POOLS with a member's baseUrl). */
  vars?: Record<string, string> | ((standinUrl: string) => Record<string, string>);
  /** Starts the gateway with ADMIN_TOKEN set, so the admin routes answer. */
  admin?: boolean;
  /** wrangler's log level; `log` keeps the Worker's info event lines in gateway.output(). */
  logLevel?: GatewayOptions["logLevel"];
  /** `PROVIDERS` given the stand-in's URL (default: openai and anthropic at it; `gatewayProviders` points every built-in at its dialect). */
  providers?: (standinUrl: string) => GatewayOptions["providers"];
}

/**
 * Starts one stand-in and one gateway (openai and anthropic pointed at the stand-in, or the providers given) before
 * the file's tests, and closes both after them, whatever happened. Read the fields inside tests.
 */
export function useStack(opts: StackOptions = {}): Stack {
  const stack = {} as Stack;
  beforeAll(async () => {
    stack.standin = await startStandin(opts.standin);
    const baseUrl = stack.standin.url;
    stack.gateway = await startGateway({
      providers: opts.providers?.(baseUrl) ?? { openai: { baseUrl }, anthropic: { baseUrl } },
      vars: { ...(typeof opts.vars === "function" ? opts.vars(baseUrl) : opts.vars), ...(opts.admin ? { ADMIN_TOKEN } : {}) },
      verbose: !!process.env.E2E_VERBOSE,
      logLevel: opts.logLevel,
    });
  });
  afterAll(async () => {
    const closing = [stack.gateway?.close(), stack.standin?.close()];
    const failed = (await Promise.allSettled(closing)).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  });
  return stack;
}

/** A credential no other test uses, so each test gets its own limiter key and stand-in buckets. */
export function credential(label: string): string {
  return `sk-e2e-${label}-${randomBytes(6).toString("hex")}`;
}

/** The official OpenAI SDK, unchanged but for baseURL and apiKey; its own retries off. */
export function openaiVia(stack: Stack, apiKey: string, provider = "openai"): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${stack.gateway.url}/${provider}/v1`, maxRetries: 0, timeout: 60_000 });
}

/** The official Anthropic SDK, unchanged but for baseURL and apiKey; its own retries off. */
export function anthropicVia(stack: Stack, apiKey: string, provider = "anthropic"): Anthropic {
  return new Anthropic({ apiKey, baseURL: `${stack.gateway.url}/${provider}`, maxRetries: 0, timeout: 60_000 });
}

/** A prompt the stand-in (echo: true) answers word for word, so a reply proves the body went through. */
export const prompt = (label: string) => `Slotgate end to end check for ${label} please`;

/** The x-slotgate-* headers of one answer, checked for shape. */
export function stamped(res: Response, provider: string, model: string): { key: string; attempts: number; queueMs: number } {
  const key = res.headers.get("x-slotgate-key") ?? "";
  const attempts = res.headers.get("x-slotgate-attempts") ?? "";
  const queueMs = res.headers.get("x-slotgate-queue-ms") ?? "";
  expect(key).toMatch(new RegExp(`^${provider}:${model}:[0-9a-f]{16}$`));
  expect(attempts).toMatch(/^\d+$/);
  expect(queueMs).toMatch(/^\d+$/);
  return { key, attempts: Number(attempts), queueMs: Number(queueMs) };
}

/** The error an awaited SDK call threw (the test fails if it resolved). */
export async function rejection(p: PromiseLike<unknown>): Promise<unknown> {
  const outcome = await Promise.resolve(p).then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  if (outcome.ok) expect.fail(`expected the call to fail, it resolved with ${JSON.stringify(outcome.v).slice(0, 300)}`);
  return outcome.e;
}

/** The stand-in's log for one credential, in arrival order. */
export function attemptsOf(stats: Stats, apiKey: string): Attempt[] {
  return stats.log.filter((a) => a.credential === apiKey);
}

export async function until(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The parts of `GET /admin/keys/:key` the tests read. */
export interface LimiterState {
  concurrency: { limit: number; phase: string };
  cooldownUntil: string | null;
  metrics: Record<string, number>;
  history: { from: number; to: number; reason: string }[];
}

/** GET /admin/keys/:key (the gateway must have been started with `admin: true`). */
export async function limiterState(stack: Stack, key: string): Promise<LimiterState> {
  const res = await fetch(`${stack.gateway.url}/admin/keys/${encodeURIComponent(key)}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LimiterState;
}

const CLIENT = resolve(import.meta.dirname, "client.ts");

/**
 * Runs `processes` separate Node processes (test/e2e/client.ts, plain `node`), each sending
 * `requests` chat completions through the gateway with the openai SDK, all with the same apiKey.
 * They start together at a shared instant so that their traffic really overlaps.
 */
export async function runClients(
  stack: Stack,
  opts: { apiKey: string; processes: number; requests: number; concurrency: number; model?: string },
): Promise<ClientResult[][]> {
  const startAt = Date.now() + 1_500; // every process has loaded the SDK by then
  const spec: ClientSpec = {
    baseURL: `${stack.gateway.url}/openai/v1`, apiKey: opts.apiKey, model: opts.model ?? OPENAI_MODEL,
    requests: opts.requests, concurrency: opts.concurrency, startAt,
  };
  return Promise.all(Array.from({ length: opts.processes }, (_, i) => runClient({ ...spec, label: `p${i}` })));
}

function runClient(spec: ClientSpec & { label: string }): Promise<ClientResult[]> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [CLIENT, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
    child.once("error", fail);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return fail(new Error(`client ${spec.label} exited (${code ?? signal}):\n${err}`));
      try {
        ok(JSON.parse(out) as ClientResult[]);
      } catch {
        fail(new Error(`client ${spec.label} printed no result:\n${out}\n${err}`));
      }
    });
  });
}
