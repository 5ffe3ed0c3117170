// The simulator's figure for the shape a benchmark scenario just measured, printed beside it, so
// the simulator is checked against wrangler dev. Runs sim/shape.ts (tsx: it imports src/ as is).
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import type { StandinOptions } from "../test/support/standin/index.ts";
import type { Ctx } from "./context.ts";
import { PROMPT } from "./context.ts";
import { NEUTRAL } from "./real/measure.ts";
import type { RealShape } from "./real/shapes.ts";
import type { Row } from "./stats.ts";

export interface SimResult {
  makespanMs: number;
  idealMs: number;
  attempts: number;
  upstream429: number;
  /** Answers the provider generated. */
  generations: number;
  failed: number;
}

/** Loopback and wrangler dev's object calls are a few ms, not a region's 20. */
export const LOCAL = { netMs: 1, rpcMs: 2 };

export function simulate(ctx: Ctx, options: Partial<StandinOptions> & { drained?: boolean }, maxTokens: number, via: "gateway" | "direct" = "gateway"): SimResult {
  const fleet = { k: ctx.opts.k, c: ctx.opts.concurrency, n: ctx.opts.k * ctx.opts.m, maxTokens, promptChars: PROMPT.length };
  return simulateShape({ shape: { flavour: "openai", ...options }, fleet, via });
}

export interface ShapeSpec {
  shape: Record<string, unknown>;
  fleet: Record<string, unknown>;
  via: "gateway" | "direct";
  client?: string;
  workerMs?: number;
  serialMs?: number;
  rpcMs?: number;
}

/** A spec on the local network's delays. */
export const local = (spec: ShapeSpec): ShapeSpec => ({ ...spec, shape: { netMs: LOCAL.netMs, ...spec.shape }, rpcMs: LOCAL.rpcMs });

/** A real-client shape (bench/real/shapes.ts) as the simulator runs it: same provider options, fleet, limit changes and client. */
export function realSpec(s: RealShape, via: "gateway" | "direct", serialMs = 0): ShapeSpec {
  const shape = { ...NEUTRAL, ...s.standin, flavour: s.client === "anthropic" ? "anthropic" : "openai", changes: s.changes };
  const fleet = { k: s.k, c: s.c, n: s.k * s.m, maxTokens: s.maxTokens, promptChars: PROMPT.length };
  return { shape, fleet, via, client: s.client === "promptfoo" ? "promptfoo" : "sdk", serialMs };
}

/** Any shape sim/shape.ts takes (sim/scenario.ts Scenario: shape, fleet, client), on the local network's delays. */
export function simulateShape(spec: ShapeSpec): SimResult {
  const root = resolve(import.meta.dirname, "..");
  const out = execFileSync(resolve(root, "node_modules/.bin/tsx"), [resolve(root, "sim/shape.ts"), JSON.stringify(local(spec))], { cwd: root, encoding: "utf8" });
  return JSON.parse(out) as SimResult;
}

/** What sim/pool.ts answers for a pool: makespan, ideal, attempts, 429s, and per member successes and attempts. */
export interface PoolSimResult {
  makespanMs: number;
  idealMs: number;
  failed: number;
  attempts: number;
  upstream429: number;
  served: Record<string, number>;
  tried: Record<string, number>;
}

/**
 * The simulator's run of a pool (sim/pool.ts: the real router, retry loop and a limiter per member),
 * one isolate as under wrangler dev, with the local network's delay.
 */
export function simulatePoolShape(pool: { members: { name: string; rpm: number; exhausted?: boolean }[]; shape: Record<string, unknown>; fleet: Record<string, unknown>; outMs?: number }): PoolSimResult {
  const root = resolve(import.meta.dirname, "..");
  const spec = { pool: { isolates: 1, ...pool, shape: { flavour: "openai", netMs: LOCAL.netMs, ...pool.shape } } };
  const out = execFileSync(resolve(root, "node_modules/.bin/tsx"), [resolve(root, "sim/shape.ts"), JSON.stringify(spec)], { cwd: root, encoding: "utf8" });
  return JSON.parse(out) as PoolSimResult;
}

/** The simulator's run of a fair-share shape (sim/fair.ts), with the local network's delays. */
export function simulateFair<R>(fair: Record<string, unknown>): R {
  const root = resolve(import.meta.dirname, "..");
  const spec = { fair: { rpcMs: LOCAL.rpcMs, ...fair } };
  const out = execFileSync(resolve(root, "node_modules/.bin/tsx"), [resolve(root, "sim/shape.ts"), JSON.stringify(spec)], { cwd: root, encoding: "utf8" });
  return JSON.parse(out) as R;
}

const pct = (r: SimResult) => `${((100 * r.upstream429) / Math.max(1, r.attempts)).toFixed(1)}% 429`;

/** A row: the simulator's makespan (against the ideal, or a direct run) and 429 share for this shape. */
export function simRow(scenario: string, sim: SimResult, direct?: SimResult): Row {
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const value = `${secs(sim.makespanMs)} = ${(sim.makespanMs / sim.idealMs).toFixed(2)}x ideal, ${pct(sim)}, ${sim.failed} failed`;
  return { scenario, metric: "simulator, same shape (makespan, 429s)", baseline: direct ? `${secs(direct.makespanMs)}, ${pct(direct)}` : "", value };
}
