// Fair shares in simulation: a batch job keeps a deep queue on one key while an interactive caller
// sends one request at a time. Each scenario runs twice on the same seed, the batch job alone and
// with the interactive caller beside it: how long the interactive caller waits for a slot, and
// what its share costs the batch job.
import type { LimiterConfig } from "../src/config/limits";
import type { Who } from "../src/proxy/caller";
import { mulberry32 } from "../test/support/standin/faults.ts";
import { type Fleet, request, runFleet } from "./clients.ts";
import { Clock } from "./clock.ts";
import { gatewaySender, RPC_MS, SimObject } from "./gateway.ts";
import { type Shape, SimProvider } from "./provider.ts";
import { providerRate } from "./scenario.ts";

export interface Interactive {
  /** Its headers; none: the key's default caller. */
  who?: Who;
  /** When its first request goes, after the batch job's. */
  startMs: number;
  n: number;
  /** Pause between an answer and the next request. */
  thinkMs: number;
}

export interface FairScenario {
  name: string;
  shape: Shape;
  batch: Fleet;
  batchWho?: Who;
  interactive: Interactive;
  config?: Partial<LimiterConfig>;
  rpcMs?: number;
  seed?: number;
  /** Today's behaviour for comparison: shown, held to no target. */
  contrast?: boolean;
}

export interface FairResult {
  name: string;
  contrast: boolean;
  /** The provider's mean time per answer. */
  latencyMs: number;
  /**
   * The interactive caller's waits for a slot (its answers' x-slotgate-queue-ms), over the
   * requests it sent while the batch job was still running; `measured` counts those.
   */
  measured: number;
  waitP50Ms: number;
  waitMaxMs: number;
  /** The batch job's makespan alone, and beside the interactive caller. */
  aloneMs: number;
  sharedMs: number;
  /** What the interactive requests sent during the batch take of the key at its rate (the quota's or the cap's). */
  interactiveShareMs: number;
  /** Non-2xx answers, either caller. */
  failed: number;
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length / 2) - 1)] ?? 0;

async function once(sc: FairScenario, withInteractive: boolean) {
  const clock = new Clock();
  const start = clock.now;
  const seed = sc.seed ?? 1;
  const provider = new SimProvider(clock, sc.shape, seed);
  const obj = new SimObject(clock, sc.config);
  const random = mulberry32(seed ^ 0x5bd1e995);
  const rpc = sc.rpcMs ?? RPC_MS;
  const batch = runFleet(sc.batch, gatewaySender(clock, provider, obj, random, { rpcMs: rpc, who: sc.batchWho }), clock);
  const waits: { at: number; ms: number }[] = [];
  let failed = 0;
  const interactive = async () => {
    const send = gatewaySender(clock, provider, obj, random, { rpcMs: rpc, who: sc.interactive.who });
    await clock.sleep(sc.interactive.startMs);
    for (let i = 0; i < sc.interactive.n; i++) {
      const at = clock.now;
      const res = await send(request(sc.batch, 1_000_000 + i));
      await res.arrayBuffer();
      if (res.status >= 400) failed++;
      waits.push({ at, ms: Number(res.headers.get("x-slotgate-queue-ms") ?? Number.NaN) });
      await clock.sleep(sc.interactive.thinkMs);
    }
  };
  const done = withInteractive ? interactive() : Promise.resolve();
  await clock.run();
  const answers = await batch;
  await done;
  failed += answers.filter((a) => a.status >= 400).length;
  const end = Math.max(start, ...answers.map((a) => a.at));
  // Only calls made while the batch job was there say anything about sharing the key with it.
  return { makespanMs: end - start, waits: waits.filter((w) => w.at < end).map((w) => w.ms), failed };
}

export async function simulateFair(sc: FairScenario): Promise<FairResult> {
  const alone = await once(sc, false);
  const shared = await once(sc, true);
  return {
    name: sc.name,
    contrast: sc.contrast ?? false,
    latencyMs: (sc.shape.latencyMs ?? 300) + (sc.shape.jitterMs ?? 0) / 2,
    measured: shared.waits.length,
    waitP50Ms: p50(shared.waits),
    waitMaxMs: Math.max(0, ...shared.waits),
    aloneMs: alone.makespanMs,
    sharedMs: shared.makespanMs,
    interactiveShareMs: shared.waits.length / providerRate(sc.shape, sc.batch),
    failed: alone.failed + shared.failed,
  };
}

/** The targets: wait p50 <= 2x the provider's latency; the batch job <= 1.05x (alone + the interactive share). */
export const waitRatio = (r: FairResult) => r.waitP50Ms / r.latencyMs;
export const makespanRatio = (r: FairResult) => r.sharedMs / (r.aloneMs + r.interactiveShareMs);
export const fairPass = (r: FairResult) => !r.contrast && r.failed === 0 && waitRatio(r) <= 2 && makespanRatio(r) <= 1.05;

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const FAIR_HEADER = [
  "| scenario | interactive calls during the batch | wait p50 / max | wait p50 / latency | batch alone | batch beside it | interactive share | beside / (alone + share) | target | |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
];

export function fairRow(r: FairResult): string {
  const wait = `${Math.round(r.waitP50Ms)} ms / ${Math.round(r.waitMaxMs)} ms`;
  return `| ${r.name} | ${r.measured} | ${wait} | ${waitRatio(r).toFixed(2)}x | ${s(r.aloneMs)} | ${s(r.sharedMs)} | ${s(r.interactiveShareMs)} | ${makespanRatio(r).toFixed(3)}x | ${r.contrast ? "none (today's FIFO, for comparison)" : "<=2x, <=1.05x"} | ${r.contrast ? "" : fairPass(r) ? "pass" : "MISS"} |`;
}

const C = 16;
const SIZE = { maxTokens: 16, promptChars: 400 };
const LOW_BATCH: Who = { caller: "batch", priority: "low" };
const DEV = { startMs: 4_000, n: 20, thinkMs: 500 };

/**
 * 8 batch processes of 16 in flight each (a queue about a hundred deep) and one developer's calls
 * from 4 s on: on a 1,200 RPM key, and on a key capped at 12 in flight. "before" is today's
 * behaviour for callers that send nothing new: one FIFO line, kept as the figure to beat.
 */
export function fairScenarios(): FairScenario[] {
  const rpm: Shape = { flavour: "openai", rpm: 1_200, burst: 1, drained: true, latencyMs: 1_000, jitterMs: 200 };
  const cap: Shape = { flavour: "openai", maxConcurrent: 12, rpm: 100_000, latencyMs: 1_000, jitterMs: 200 };
  const batch = (n: number): Fleet => ({ k: 8, c: C, n, ...SIZE });
  return [
    { name: "fair rpm1200 batch low, interactive sends nothing", shape: rpm, batch: batch(800), batchWho: LOW_BATCH, interactive: DEV },
    { name: "fair rpm1200 two callers, one lane", shape: rpm, batch: batch(800), batchWho: { caller: "batch" }, interactive: { ...DEV, who: { caller: "dev" } } },
    { name: "fair cap12 batch low, interactive sends nothing", shape: cap, batch: batch(400), batchWho: LOW_BATCH, interactive: DEV },
    { name: "fair rpm1200 nobody sends headers (today's one FIFO line)", shape: rpm, batch: batch(800), interactive: DEV, contrast: true },
  ];
}
