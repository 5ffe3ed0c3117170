// One run of a real-client shape: its clients through the gateway (or straight at the stand-in),
// the stand-in's own count of what reached it, and the limit changes on the shape's schedule.
import type { ClientSpec } from "../client.ts";
import { configure, type Ctx, limiterState, MODEL, PROMPT } from "../context.ts";
import { runFleet } from "../fleet.ts";
import { runPromptfoo } from "./promptfoo.ts";
import type { Sched } from "../../test/support/gateway.ts";
import type { RealShape } from "./shapes.ts";
import { timelineOf, writeTimeline } from "./timeline.ts";

export const ANTHROPIC_MODEL = "claude-haiku-4-5";

export interface Measured {
  via: "gateway" | "direct";
  /** Requests (tests) the callers made, and how many ended well. */
  requests: number;
  ok: number;
  /** What the callers saw that was not an answer: status (0: no answer, "error": a promptfoo test error) -> count. */
  failures: Record<string, number>;
  makespanMs: number;
  /** At the stand-in: attempts, 429s among them, answers generated (the caller pays for each). */
  attempts: number;
  upstream429: number;
  generations: number;
  /**
   * SDK shapes through the gateway: the median attempt's time from the Worker's send to its answer
   * (the limiter's own p50), less the provider's latency: what this machine adds to every attempt
   * while it holds its slot, which the simulator is given for the same row.
   */
  workerMs?: number;
  /**
   * SDK shapes through the gateway, from "go" to the last answer: the busiest workerd process's
   * time on a CPU and waiting for one (ms), and that over requests plus attempts: the simulator's
   * machine (sim/machine.ts) is given it.
   */
  sched?: { cpuMs: number; waitMs: number };
  serialMs?: number;
  /** promptfoo only: spawn to the last exit, and its first error messages. */
  wallMs?: number;
  errorSamples?: string[];
}

/** Neutral stand-in settings every shape starts from (bench/context.ts configure), as the simulator must see them too. */
export const NEUTRAL = { rpm: 0, tpm: 0, burst: 1, maxConcurrent: 0, headers: true, retryAfter: "exact", latencyMs: 0, jitterMs: 0, faults: {} } as const;

function baseURL(ctx: Ctx, s: RealShape, via: "gateway" | "direct"): string {
  const root = via === "direct" ? ctx.standin.url : `${ctx.gateway.url}/${s.client === "anthropic" ? "anthropic" : "openai"}`;
  return s.client === "anthropic" ? root : `${root}/v1`;
}

/** Limit changes at their times after "go"; returns a function that cancels the ones still pending. */
function schedule(ctx: Ctx, s: RealShape): () => void {
  const timers = (s.changes ?? []).map((c) => setTimeout(() => ctx.standin.configure(c.set), c.atMs));
  return () => timers.forEach(clearTimeout);
}

export async function measure(ctx: Ctx, s: RealShape, via: "gateway" | "direct"): Promise<Measured> {
  configure(ctx, s.standin);
  const apiKey = `sk-bench-${s.name}-${via}-${Date.now().toString(36)}`;
  let cancel = () => {};
  try {
    if (s.client === "promptfoo") {
      ctx.standin.resetStats();
      cancel = schedule(ctx, s);
      const pf = await runPromptfoo({ baseURL: baseURL(ctx, s, via), apiKey, model: MODEL, maxTokens: s.maxTokens, k: s.k, m: s.m, c: s.c });
      const up = ctx.standin.stats();
      // Measured at the provider: the CLI's own start-up (seconds, per process) is not the gateway's.
      const answers = up.log.filter((a) => a.outcome === "success").map((a) => a.at);
      const makespanMs = answers.length ? Math.max(...answers) + s.standin.latencyMs! - (up.firstAttemptAt ?? 0) : Number.NaN;
      return {
        via, requests: pf.tests, ok: pf.tests - pf.errors, failures: pf.errors ? { error: pf.errors } : {}, makespanMs,
        attempts: up.attempts, upstream429: up.rateLimited, generations: up.successes, wallMs: pf.wallMs, errorSamples: pf.errorSamples,
      };
    }
    const spec: ClientSpec = {
      baseURL: baseURL(ctx, s, via), apiKey, model: s.client === "anthropic" ? ANTHROPIC_MODEL : MODEL, requests: s.m, concurrency: s.c,
      maxRetries: via === "direct" ? 2 : 0, maxTokens: s.maxTokens, prompt: PROMPT, sdk: s.client, streamEvery: s.streamEvery,
    };
    // The gateway's own machine time (direct runs have no gateway).
    const machine = () => (via === "gateway" ? ctx.gateway.sched() : {});
    let atGo: Sched = {};
    const fleet = await runFleet(s.k, spec, async () => {
      ctx.standin.resetStats();
      cancel = schedule(ctx, s);
      atGo = machine();
    });
    const sched = busiest(atGo, machine());
    const up = ctx.standin.stats();
    const state = via === "gateway" ? await limiterState(ctx, fleet.key) : null;
    if (ctx.opts.timeline) console.error(`bench: ${writeTimeline(timelineOf(s.name, via, fleet, up.log, apiKey, state, ctx.gateway.output()))}`);
    const workerMs = state ? Math.max(0, Math.round(state.metrics.p50LatencyMs - (s.standin.latencyMs ?? 0))) : undefined;
    return {
      via, requests: fleet.requests, ok: fleet.ok, failures: fleet.failures, makespanMs: fleet.makespan,
      attempts: up.attempts, upstream429: up.rateLimited, generations: up.successes, workerMs,
      ...(via === "gateway" && { sched, serialMs: Math.round((10 * (sched.cpuMs + sched.waitMs)) / (fleet.requests + up.attempts)) / 10 }),
    };
  } finally {
    cancel();
  }
}

/** The workerd process that worked most between two readings: the one running the Worker and its objects. */
function busiest(before: Sched, after: Sched): { cpuMs: number; waitMs: number } {
  let best = { cpuMs: 0, waitMs: 0 };
  for (const [pid, a] of Object.entries(after)) {
    const b = before[pid] ?? { cpuMs: 0, waitMs: 0 };
    const d = { cpuMs: Math.round(a.cpuMs - b.cpuMs), waitMs: Math.round(a.waitMs - b.waitMs) };
    if (d.cpuMs + d.waitMs > best.cpuMs + best.waitMs) best = d;
  }
  return best;
}
