// Fair shares: a batch job (K processes, a caller of its own in the low lane, as `slotgate batch`
// sends) keeps a deep queue on a quota-bound key while an interactive caller that sends nothing
// new makes one call at a time from a few seconds in. Three runs, each on a credential of its own
// (its own limiter and drained bucket): the batch job alone; the two together; and the two
// together with no headers at all, today's one FIFO line, as the baseline.
import { baseURL, configure, type Ctx, drain, limiterState, MODEL, PROMPT, type Scenario } from "../context.ts";
import type { ClientSpec } from "../client.ts";
import { type Fleet, runFleets } from "../fleet.ts";
import { simulateFair } from "../simulated.ts";
import { goal, ms, type Row, secs, spread } from "../stats.ts";

const LATENCY = { latencyMs: 800, jitterMs: 400 };
const MEAN_LATENCY = LATENCY.latencyMs + LATENCY.jitterMs / 2;
const MAX_TOKENS = 16;
const BATCH_HEADERS = { "x-slotgate-caller": "bench-batch", "x-slotgate-priority": "low" };
const DEV = { n: 20, thinkMs: 500 };

interface Shape {
  perProcess: number;
  rpm: number;
  startMs: number;
}

interface Measured {
  batch: Fleet;
  dev: Fleet | null;
  /** The interactive caller's x-slotgate-queue-ms, for the calls it sent while the batch job ran. */
  waits: number[];
}

async function measure(ctx: Ctx, shape: Shape, run: string, o: { dev: boolean; headers: boolean }): Promise<Measured> {
  const apiKey = `sk-bench-fair-${run}`;
  const common = { baseURL: baseURL(ctx, "gateway"), apiKey, model: MODEL, maxRetries: 0, maxTokens: MAX_TOKENS, prompt: PROMPT };
  const batch: ClientSpec = { ...common, requests: shape.perProcess, concurrency: ctx.opts.concurrency, headers: o.headers ? BATCH_HEADERS : undefined };
  const dev: ClientSpec = { ...common, requests: DEV.n, concurrency: 1, startDelayMs: shape.startMs, thinkMs: DEV.thinkMs };
  const groups = [{ k: ctx.opts.k, spec: batch }, ...(o.dev ? [{ k: 1, spec: dev }] : [])];
  const [b, d] = await runFleets(groups, async () => {
    await drain(ctx, apiKey, [MAX_TOKENS]);
    ctx.standin.resetStats();
  });
  const waits = d ? d.queueMs.filter((_, i) => d.sentAt[i]! < b!.end) : [];
  return { batch: b!, dev: d ?? null, waits };
}

const answered = (f: Fleet | null) => (f ? `${f.ok}/${f.requests}` : "");

export const fair: Scenario = {
  name: "fair",
  async run(ctx: Ctx) {
    const perProcess = 2 * ctx.opts.m;
    const n = ctx.opts.k * perProcess;
    // The batch job alone would take about 40 s at the key's quota (8 s with --quick).
    const rpm = Math.max(1, Math.round((n * 60) / (ctx.opts.quick ? 8 : 40)));
    const shape: Shape = { perProcess, rpm, startMs: ctx.opts.quick ? 2_000 : 4_000 };
    configure(ctx, { rpm, ...LATENCY });
    const alone = await measure(ctx, shape, "alone", { dev: false, headers: true });
    const fifo = await measure(ctx, shape, "fifo", { dev: true, headers: false });
    const shared = await measure(ctx, shape, "shared", { dev: true, headers: true });
    const state = await limiterState(ctx, shared.batch.key);

    const scenario = `fair shares (${rpm} RPM), batch ${ctx.opts.k}x${perProcess} at ${ctx.opts.concurrency} (low) + 1 interactive`;
    const share = (m: Measured) => (m.waits.length * 60_000) / rpm;
    const ratio = (m: Measured) => m.batch.makespan / (alone.batch.makespan + share(m));
    const wait = (m: Measured) => {
      const s = spread(m.waits);
      return `${ms(s.p50)} / ${ms(Math.max(0, ...m.waits))} (${m.waits.length} calls)`;
    };
    const sim = simulateFair<{ waitP50Ms: number; aloneMs: number; sharedMs: number; interactiveShareMs: number; measured: number }>({
      name: "bench fair",
      shape: { flavour: "openai", rpm, burst: 1, drained: true, netMs: 1, ...LATENCY },
      batch: { k: ctx.opts.k, c: ctx.opts.concurrency, n, maxTokens: MAX_TOKENS, promptChars: PROMPT.length },
      batchWho: { caller: "bench-batch", priority: "low" },
      interactive: { startMs: shape.startMs, n: DEV.n, thinkMs: DEV.thinkMs },
    });
    const all = [alone.batch, shared.batch, shared.dev!].every((f) => f.ok === f.requests);
    const rows: Row[] = [
      goal({ scenario, metric: "answered: batch alone; batch, interactive (FIFO baseline | fair)", baseline: `${answered(fifo.batch)}, ${answered(fifo.dev)}`, value: `${answered(alone.batch)}; ${answered(shared.batch)}, ${answered(shared.dev)}` }, "all", all),
      goal(
        { scenario, metric: `interactive wait for a slot p50 / max, during the batch (provider latency ${ms(MEAN_LATENCY)})`, baseline: wait(fifo), value: wait(shared) },
        `p50 <= 2x latency (${ms(2 * MEAN_LATENCY)})`,
        shared.waits.length > 0 && spread(shared.waits).p50 <= 2 * MEAN_LATENCY,
      ),
      goal(
        {
          scenario,
          metric: `batch makespan beside it / (alone ${secs(alone.batch.makespan)} + interactive share)`,
          baseline: `${secs(fifo.batch.makespan)} = ${ratio(fifo).toFixed(3)}x`,
          value: `${secs(shared.batch.makespan)} = ${ratio(shared).toFixed(3)}x (share ${secs(share(shared))})`,
        },
        "<= 1.05x",
        ratio(shared) <= 1.05,
      ),
      {
        scenario,
        metric: "simulator, same shape (wait p50; batch beside / (alone + share))",
        baseline: "",
        value: `${ms(sim.waitP50Ms)} (${sim.measured} calls); ${(sim.sharedMs / (sim.aloneMs + sim.interactiveShareMs)).toFixed(3)}x`,
      },
      {
        scenario,
        metric: "limiter: callers at the end (served, lane)",
        baseline: "n/a",
        value: state ? state.callers.map((c) => `${c.caller} ${c.served} ${c.lane}`).join(", ") : "limiter state unavailable",
      },
    ];
    const data = (m: Measured) => ({ batchMakespan: m.batch.makespan, waits: m.waits, dev: m.dev && { ok: m.dev.ok, requests: m.dev.requests, queueMs: m.dev.queueMs } });
    return { rows, data: { rpm, n, alone: data(alone), fifo: data(fifo), shared: data(shared), sim, callers: state?.callers ?? null } };
  },
};
