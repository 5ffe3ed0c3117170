// One simulated run: a provider shape, a fleet of callers, the gateway or direct calls; and the
// figures the matrix judges it by.
import type { LimiterConfig } from "../src/config/limits";
import { mulberry32 } from "../test/support/standin/faults.ts";
import { bucketSpec } from "../test/support/standin/bucket.ts";
import { STANDIN_DIALECTS } from "../test/support/standin/route.ts";
import { type Answer, directSender, type Fleet, runFleet } from "./clients.ts";
import { Clock } from "./clock.ts";
import { gatewayDialect, gatewaySender, RPC_MS, SimObject, type SimRequest } from "./gateway.ts";
import { promptfooProcess } from "./promptfoo.ts";
import { Machine } from "./machine.ts";
import { NET_MS, type Shape, SimProvider } from "./provider.ts";
import type { Trace } from "./trace.ts";

export interface Scenario {
  name: string;
  /** `hint`: a retry-after longer than the deadline, which by design goes back to the callers at once. */
  family: "quota" | "cap" | "faults" | "change" | "hint";
  shape: Shape;
  fleet: Fleet;
  config?: Partial<LimiterConfig>;
  rpcMs?: number;
  /**
   * The Worker's own time per attempt while it holds the slot (before the send, after the answer):
   * what a loaded machine adds beyond the network legs. The benchmark passes what it measured.
   */
  workerMs?: number;
  /**
   * The gateway's thread per unit of work (sim/machine.ts): one per caller request, one per
   * attempt, all in one line. The benchmark passes what it measured; 0 or absent: none.
   */
  serialMs?: number;
  seed?: number;
  /** The callers' own client: an SDK (default) or promptfoo's retry and scheduling (sim/promptfoo.ts), one per process. */
  client?: "sdk" | "promptfoo";
  /** Worker isolates the gateway's requests are spread over (default 1), and whether they take tickets (default yes, as the gateway does). */
  isolates?: number;
  tickets?: boolean;
}

export interface Result {
  name: string;
  family: Scenario["family"];
  via: "gateway" | "direct";
  n: number;
  answered: number;
  /** Non-2xx answers the callers saw, and how many of them were 429s. */
  failed: number;
  failed429: number;
  makespanMs: number;
  idealMs: number;
  attempts: number;
  upstream429: number;
  /** Answers the provider generated (admitted, not faulted): a test re-sent by its client pays again. */
  generations: number;
  /** First moment the provider's admissions reached 90% of its rate (ms from the start). */
  to90Ms: number | null;
  /** After a mid-run change: the last 429 of the episode it caused, and when the new rate was reached (ms after it). */
  last429AfterChangeMs: number | null;
  rateAfterChangeMs: number | null;
  limit: number;
  cuts: number;
  objectCalls: number;
  /** First attempts that went on a ticket, with no call of their own. */
  ticketed: number;
  events: number;
}

const MINUTE = 60_000;

/** Mean time a slot at the provider is busy, and the round trip around it. */
function latency(s: Shape) {
  const busy = (s.latencyMs ?? 300) + (s.heldMs ?? 0) + (s.jitterMs ?? 0) / 2;
  return { busy, answer: busy + 2 * (s.netMs ?? NET_MS) };
}

/** Cost of one request against each limit, as the provider counts it. */
function costs(f: Fleet, s: Shape) {
  const prompt = Math.ceil(f.promptChars / 4);
  // A provider whose TPM counts input alone (Gemini's: the stand-in's `inputTpm`) draws no output from it.
  return { requests: 1, tokens: prompt + (STANDIN_DIALECTS[s.flavour].inputTpm ? 0 : f.maxTokens), input: prompt, output: f.maxTokens };
}

/** Requests per ms the provider sustains, from whichever limit binds first. */
export function providerRate(s: Shape, f: Fleet): number {
  const c = costs(f, s);
  const rates = [
    s.rpm ? s.rpm / MINUTE : Infinity,
    s.tpm ? s.tpm / MINUTE / c.tokens : Infinity,
    s.itpm ? s.itpm / MINUTE / c.input : Infinity,
    s.otpm ? s.otpm / MINUTE / c.output : Infinity,
    s.maxConcurrent ? s.maxConcurrent / latency(s).busy : Infinity,
    (f.k * f.c) / latency(s).answer,
  ];
  return Math.min(...rates);
}

/** Key of each per-minute limit in a shape, and what one request costs against it. */
const LIMITS = [["rpm", "requests"], ["tpm", "tokens"], ["itpm", "input"], ["otpm", "output"]] as const;

/**
 * Ms from the start until `need` units have refilled at a per-minute limit that `changes` may move
 * mid-run (a segment with no limit lets everything through at once).
 */
function refillMs(need: number, key: (typeof LIMITS)[number][0], s: Shape): number {
  const segments = [{ atMs: 0, limit: s[key] ?? 0 }];
  for (const c of [...(s.changes ?? [])].sort((a, b) => a.atMs - b.atMs))
    segments.push({ atMs: c.atMs, limit: c.set[key] ?? segments.at(-1)!.limit });
  let left = need;
  for (let i = 0; i < segments.length; i++) {
    const { atMs, limit } = segments[i]!;
    if (!limit || limit <= 0) return atMs;
    const perMs = limit / MINUTE;
    const span = (segments[i + 1]?.atMs ?? Infinity) - atMs;
    if (left <= perMs * span) return atMs + left / perMs;
    left -= perMs * span;
  }
  return 0;
}

/**
 * What the provider's limits allow: every request beyond the buckets' starting content at the
 * limits' rate (as they change mid-run), plus one answer; never less than the cap (or the callers'
 * own concurrency) allows. A burst is a fraction of a minute or absolute capacities, as the stand-in takes it.
 */
export function idealMs(s: Shape, f: Fleet): number {
  const c = costs(f, s);
  const lat = latency(s);
  let quota = 0;
  const fraction = typeof s.burst === "number" ? s.burst : 1;
  const abs = typeof s.burst === "object" ? s.burst : {};
  for (const [key, unit] of LIMITS) {
    const spec = bucketSpec(s[key] ?? null, fraction, unit === "requests" ? abs.requests : abs.tokens);
    if (!spec) continue;
    const start = s.drained ? 0 : spec.capacity;
    quota = Math.max(quota, refillMs(Math.max(0, f.n * c[unit] - start), key, s));
  }
  const cap = s.maxConcurrent ? Math.ceil(f.n / s.maxConcurrent) * lat.busy + 2 * (s.netMs ?? NET_MS) : 0;
  const callers = Math.ceil(f.n / (f.k * f.c)) * lat.answer;
  return Math.max(quota + lat.answer, cap, callers);
}

/** Earliest t (from `from`) at which the admissions in (t - w, t] reach `share` of `rate`. */
function reached(times: number[], rate: number, from: number, w: number, share = 0.9): number | null {
  const need = share * rate * w;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    const t = times[hi]!;
    if (t < from) continue;
    while (times[lo]! <= t - w) lo++;
    if (hi - lo + 1 >= need) return t - from;
  }
  return null;
}

/** The 429s of one episode: those less than 2 s apart from the first on (later probes are not it). */
function firstCluster(times: number[]): number[] {
  const out: number[] = [];
  for (const t of times) {
    if (out.length > 0 && t - out.at(-1)! > 2_000) break;
    out.push(t);
  }
  return out;
}

/** `trace`: records every attempt's timeline through the gateway (sim/trace.ts). */
export async function simulate(sc: Scenario, via: "gateway" | "direct", trace?: Trace): Promise<Result> {
  const clock = new Clock();
  const start = clock.now;
  const seed = sc.seed ?? 1;
  const provider = new SimProvider(clock, sc.shape, seed);
  const obj = new SimObject(clock, sc.config, trace);
  const random = mulberry32(seed ^ 0x5bd1e995);
  const pf = sc.client === "promptfoo";
  const plain = (req: SimRequest) => provider.fetch("https://provider.invalid/v1/chat/completions", { method: "POST", body: req.body });
  const send = via === "gateway" ? gatewaySender(clock, provider, obj, random, { rpcMs: sc.rpcMs ?? RPC_MS, workerMs: sc.workerMs, trace, machine: new Machine(clock, sc.serialMs ?? 0), dialect: gatewayDialect(sc.shape.flavour), isolates: sc.isolates, tickets: sc.tickets }) : pf ? plain : directSender(clock, provider.fetch, random);
  const fleetDone = runFleet(sc.fleet, send, clock, pf ? (inner) => promptfooProcess(clock, inner, random, sc.fleet.c, { resent: 0, failed: 0 }) : undefined);
  await clock.run();
  const answers: Answer[] = await fleetDone;
  const log = provider.log;
  const lat = latency(sc.shape);
  const window = Math.max(1_000, 2 * lat.answer);
  const change = sc.shape.changes?.[0];
  const changeAt = change ? start + change.atMs : null;
  const after = changeAt === null ? [] : firstCluster(log.refused.filter((t) => t >= changeAt));
  const newShape = change ? { ...sc.shape, ...change.set } : sc.shape;
  const failed = answers.filter((a) => a.status >= 400);
  return {
    name: sc.name,
    family: sc.family,
    via,
    n: sc.fleet.n,
    answered: answers.length - failed.length,
    failed: failed.length,
    failed429: failed.filter((a) => a.status === 429).length,
    makespanMs: Math.max(0, ...answers.map((a) => a.at)) - start,
    idealMs: idealMs(sc.shape, sc.fleet),
    attempts: log.attempts,
    upstream429: log.refused.length,
    generations: log.admitted.length - log.faults,
    to90Ms: reached(log.admitted, providerRate(sc.shape, sc.fleet), start, window),
    last429AfterChangeMs: changeAt === null ? null : after.length ? after.at(-1)! - changeAt : 0,
    rateAfterChangeMs: changeAt === null ? null : reached(log.admitted, providerRate(newShape, sc.fleet), changeAt, window),
    limit: obj.core.aimd.limit,
    cuts: obj.core.aimd.history.filter((h) => h.reason === "rate_limit" || h.reason === "quota").length,
    objectCalls: obj.calls,
    ticketed: obj.ticketed,
    events: clock.events,
  };
}
