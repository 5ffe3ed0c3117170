// What every scenario shares: the stand-in, the gateway(s), the options, and the one recurring
// measurement: K clients against one target, with the stand-in's view of the same run.
import type { LimiterSnapshot } from "../src/limiter/types.ts";
import type { Gateway } from "../test/support/gateway.ts";
import type { Standin, StandinOptions, Stats } from "../test/support/standin/index.ts";
import type { ClientSpec } from "./client.ts";
import { type Fleet, runFleet } from "./fleet.ts";
import type { MatrixLine } from "./real/report.ts";
import type { Row } from "./stats.ts";

export interface BenchOptions {
  /** Client processes. */
  k: number;
  /** Requests per client process. */
  m: number;
  /** In flight per client process. */
  concurrency: number;
  quick: boolean;
  /** Length of the pool rows' long run (a member without quota), seconds; default 120. */
  poolSeconds?: number;
  /** Real-client shapes write bench/timeline-<shape>-<via>.json (bench/real/timeline.ts). */
  timeline?: boolean;
}

export interface Ctx {
  opts: BenchOptions;
  standin: Standin;
  gateway: Gateway;
  /** The plain pass-through Worker, when a scenario that needs it was selected. */
  passthrough: Gateway | null;
  adminToken: string;
  /** The tree `gateway` runs (its commit, `+` when src/ differs from it). */
  name?: string;
  /** Gateways of other trees beside it (`--against`, `--probe`), for the scenarios that compare them. */
  beside?: Beside[];
}

/** Another tree's gateway, run side by side with the one under test (bench/trees.ts). */
export interface Beside {
  name: string;
  gateway: Gateway;
  /** It grants every acquire in the Worker, never asking its limiter (bench/trees.ts). */
  probe: boolean;
}

export interface Scenario {
  name: string;
  /** Needs the pass-through Worker. */
  passthrough?: boolean;
  /** Compares the gateways of other trees when asked (`--against`, `--probe`). */
  beside?: boolean;
  /** One shape of the real-client matrix (bench/real): selected together by `--only real`. */
  real?: boolean;
  /** Vars the gateway needs for it (POOLS and the members' keys), merged into the one gateway's; given the stand-in (a key it made). */
  vars?: (standin: Standin) => Record<string, string>;
  /** Providers beyond the built-ins at the stand-in (`PROVIDERS`), merged into the one gateway's. */
  providers?: (standinUrl: string) => Record<string, { baseUrl: string; quota?: unknown }>;
  run(ctx: Ctx): Promise<{ rows: Row[]; data: unknown; matrix?: MatrixLine }>;
}

/**
 * `floor`: the plain Worker after one empty Durable Object call (what any per-request object call
 * costs); `memory`: the plain Worker answering from memory, never calling the stand-in;
 * `beside:<name>`: the gateway of another tree (`ctx.beside`).
 */
export type Via = "direct" | "gateway" | "passthrough" | "floor" | "memory" | `beside:${string}`;

export const MODEL = "gpt-4o-mini";
export const PROMPT = "Summarise the plot of Hamlet in one sentence.";

/** The Worker that serves `via` (none for `direct`, which goes to the stand-in itself). */
export function workerOf(ctx: Ctx, via: Via): Gateway | null {
  if (via === "direct") return null;
  if (via.startsWith("beside:")) {
    const other = ctx.beside?.find((b) => `beside:${b.name}` === via);
    if (!other) throw new Error(`no gateway ${via.slice(7)} was started`);
    return other.gateway;
  }
  const gw = via === "gateway" ? ctx.gateway : ctx.passthrough;
  if (!gw) throw new Error("the pass-through Worker was not started");
  return gw;
}

/** Where an OpenAI client points for each way of reaching the stand-in. */
export function baseURL(ctx: Ctx, via: Via): string {
  const gw = workerOf(ctx, via);
  if (!gw) return `${ctx.standin.url}/v1`;
  if (via.startsWith("beside:")) return `${gw.url}/openai/v1`;
  return `${gw.url}${via === "floor" ? "/do" : via === "memory" ? "/memory" : ""}/openai/v1`;
}

/**
 * CPU time the workerd processes of a Worker have used so far, over all their threads (Linux
 * schedstat; 0 where it cannot be read): what its requests cost the runtime, apart from how long
 * they waited for a core.
 */
export function workerdCpuMs(gw: Gateway | null): number {
  if (!gw) return 0;
  try {
    return Object.values(gw.sched()).reduce((sum, s) => sum + s.cpuMs, 0);
  } catch {
    return 0;
  }
}

/** The stand-in's cost of one bench request, as it charges TPM: prompt chars / 4 + max tokens. */
export const requestTokens = (maxTokens: number) => Math.ceil(PROMPT.length / 4) + maxTokens;

/**
 * Empties the credential's buckets (requests, tokens) straight at the stand-in, at zero latency,
 * so a run starts from a key that has been busy, not from a full minute of burst. One pass per
 * request size, largest first, each until the stand-in refuses.
 */
export async function drain(ctx: Ctx, apiKey: string, sizes: number[]): Promise<void> {
  const saved = ctx.standin.options();
  ctx.standin.configure({ latencyMs: 0, jitterMs: 0, faults: {}, maxConcurrent: 0 });
  const body = (maxTokens: number) => JSON.stringify({ model: MODEL, messages: [{ role: "user", content: PROMPT }], max_tokens: maxTokens });
  const send = (maxTokens: number) =>
    fetch(`${ctx.standin.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: body(maxTokens),
    }).then(async (r) => (await r.arrayBuffer(), r.status));
  try {
    for (const size of sizes)
      for (let refused = false; !refused; ) refused = (await Promise.all(Array.from({ length: 32 }, () => send(size)))).includes(429);
  } finally {
    ctx.standin.configure({ latencyMs: saved.latencyMs, jitterMs: saved.jitterMs, faults: saved.faults, maxConcurrent: saved.maxConcurrent });
  }
}

/** The limiter's own count of calls into it, the ops they carried and the requests it saw (its Prometheus counters), for one key. */
export async function limiterCalls(ctx: Ctx, key: string | null): Promise<{ calls: number; ops: number; requests: number } | null> {
  if (!key) return null;
  const res = await fetch(`${ctx.gateway.url}/admin/metrics`, { headers: { authorization: `Bearer ${ctx.adminToken}` } });
  if (!res.ok) return null;
  const lines = (await res.text()).split("\n");
  const hash = `key_hash="${key.slice(key.lastIndexOf(":") + 1)}"`;
  const sum = (name: string) =>
    lines.filter((l) => l.startsWith(`${name}{`) && l.includes(hash)).reduce((s, l) => s + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return { calls: sum("slotgate_limiter_calls_total"), ops: sum("slotgate_limiter_ops_total"), requests: sum("slotgate_requests_total") };
}

export async function limiterState(ctx: Ctx, key: string | null): Promise<LimiterSnapshot | null> {
  if (!key) return null;
  const res = await fetch(`${ctx.gateway.url}/admin/keys/${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${ctx.adminToken}` } });
  return res.ok ? ((await res.json()) as LimiterSnapshot) : null;
}

/** Concurrency cuts: history entries that lowered the limit on a rate-limit or quota signal. */
export const cuts = (s: LimiterSnapshot | null) => s?.history.filter((h) => h.reason === "rate_limit" || h.reason === "quota").length ?? 0;

export interface Side {
  via: Via;
  fleet: Fleet;
  /** CPU the Worker behind `via` used during the run (workerdCpuMs; 0: not read). */
  cpuMs: number;
  upstream: Stats;
  limiter: LimiterSnapshot | null;
}

export interface SideSpec {
  via: Via;
  /** Distinct per run: the stand-in's buckets and the gateway's limiter are per credential. */
  apiKey: string;
  maxTokens: number;
  /** Request sizes to drain the credential's buckets with before "go"; none: start full. */
  drain?: number[];
  spec?: Partial<ClientSpec>;
  k?: number;
}

/**
 * One measured run: K clients through `via`; direct callers keep the SDK's default retries (2),
 * gateway callers use maxRetries 0 (the gateway retries). Stand-in counters cover exactly this run.
 */
export async function side(ctx: Ctx, s: SideSpec): Promise<Side> {
  const spec: ClientSpec = {
    baseURL: baseURL(ctx, s.via),
    apiKey: s.apiKey,
    model: MODEL,
    requests: ctx.opts.m,
    concurrency: ctx.opts.concurrency,
    maxRetries: s.via === "direct" ? 2 : 0,
    maxTokens: s.maxTokens,
    prompt: PROMPT,
    ...s.spec,
  };
  const worker = workerOf(ctx, s.via);
  let cpuAtGo = 0;
  const fleet = await runFleet(s.k ?? ctx.opts.k, spec, async () => {
    if (s.drain) await drain(ctx, s.apiKey, s.drain);
    ctx.standin.resetStats();
    cpuAtGo = workerdCpuMs(worker);
  });
  const cpuMs = workerdCpuMs(worker) - cpuAtGo;
  const upstream = ctx.standin.stats();
  const limiter = s.via === "gateway" ? await limiterState(ctx, fleet.key) : null;
  return { via: s.via, fleet, cpuMs, upstream, limiter };
}

/** The stand-in's settings for a scenario; everything not named goes back to a neutral default. */
export function configure(ctx: Ctx, o: Partial<StandinOptions>): void {
  ctx.standin.configure({
    rpm: 0, tpm: 0, itpm: null, otpm: null, rpd: 0, monthlyTokens: 0, burst: 1, maxConcurrent: 0, headers: true, retryAfter: "exact",
    latencyMs: 0, heldMs: 0, jitterMs: 0, faults: {}, keyLimits: {}, quotaExhaustedKeys: [], flexShed: 0, ...o,
  });
  ctx.standin.reset();
}
