// `slotgate batch --mode provider|auto`: the lines go to the providers' batch APIs at their batch
// price, and the output is what sync mode would have written. The job's batches are in a state
// file beside --out (journal.ts) before anything else happens, so --resume attaches to them and
// never submits a line whose batch exists. Lines a batch did not answer run synchronously, once.
import { randomUUID } from "node:crypto";
import { fileItems, progressOf, summarize } from "../pending";
import type { Item } from "../input";
import { UsageError } from "../input";
import type { Session } from "../session";
import type { BatchSummary, OutputLine } from "../types";
import { sleep } from "../../sleep";
import { type Api, BATCH_API_ROWS, type BatchApiRow } from "../../providers/lines";
import { type ApiContext, type BatchApi, JobStopped } from "./api";
import type { SendContext } from "../exchange";
import { fileBatchApi } from "./file-batches";
import { inlineBatchApi } from "./inline-batches";
import { type Chunk, current, fold, Journal, journalPath, phaseOf } from "./journal";
import { SyncLane } from "./lane";
import { apiFor, GATEWAY_BYTES, planChunks } from "./plan";
import { Steps } from "./steps";
import { startBatchView, summaryOf } from "./view";

/** The lines each batch API takes, as a refusal lists them: `<provider> <endpoint>, ...; ...`. */
const BATCHED = Object.entries(BATCH_API_ROWS).map(([api, row]) => `${api} ${row.urls.map((u) => u.replace(/^\/v1\//, "")).join(", ")}`).join("; ");

/** How often a running batch is looked at, at most: the first looks come sooner (1 s, then doubling). */
export const POLL_MS = 30_000;
/** A chunk refused for queue room while none of this job's batches runs tries again after this, doubled each time (at most 10 minutes). */
const QUEUE_RETRY_MS = 30_000;
/** A chunk's step failing this many times in a row ends the run (what was recorded stays: --resume goes on). */
const MAX_FAILURES = 8;

export async function runProviderJob(s: Session, mode: "provider" | "auto"): Promise<BatchSummary> {
  const o = s.o;
  const file = journalPath(o.out);
  const events = Journal.read(file);
  if (events.length === 0 && o.cancel) throw new UsageError(`${file} names no batches: nothing to cancel`);
  if (events.length > 0 && !o.resume && !o.cancel) throw new UsageError(`${file} holds the batches of an earlier run: pass --resume to attach to them, or choose another --out`);
  const job = fold(events, randomUUID());

  // Every line not yet answered; in provider mode, each must have a batch API.
  const items = new Map<string, Item>();
  const unbatched: (Item | OutputLine)[] = [];
  for await (const it of fileItems(s)) {
    if ("custom_id" in it || apiFor(it) === null) unbatched.push(it);
    if (!("custom_id" in it)) items.set(it.customId, it);
  }
  const refusedLines = unbatched.filter((it): it is Item => !("custom_id" in it));
  if (mode === "provider" && refusedLines.length > 0 && !o.cancel) {
    s.close();
    const shown = refusedLines.slice(0, 5).map((it) => `${it.customId} (${it.provider} ${it.url})`).join(", ");
    throw new UsageError(`--mode provider: ${refusedLines.length} lines have no batch API here (${BATCHED}): ${shown}; use --mode auto to run them synchronously`);
  }
  // Refused before this: no state file, as no output file (a job that never started leaves nothing).
  const journal = new Journal(file);
  if (events.length === 0) journal.add({ e: "job", job: job.job, at: s.ctx.now() });

  const lane = new SyncLane(s);
  const steps = new Steps(s, journal, job, items, apisFor(s, s.ctx), lane);
  const inChunks = new Set([...job.chunks.values()].flatMap((c) => c.plan.ids));
  const limits = (api: Api) => ({
    lines: o.batchLines ?? BATCH_API_ROWS[api].limits.lines,
    bytes: o.batchBytes ?? (o.gateway ? GATEWAY_BYTES : BATCH_API_ROWS[api].limits.bytes),
  });
  for (const plan of planChunks([...items.values()].filter((it) => !inChunks.has(it.customId) && apiFor(it)), limits, job.chunks.size)) steps.add(plan);
  const pending = s.entries.filter((e) => !s.done.has(e.id)).length;
  const view = o.progress ? startBatchView(() => ({ job, views: steps.views, progress: progressOf(s, pending), lane: lane.pushed }), o.progress) : null;
  try {
    if (o.cancel) await cancelAll(steps);
    else {
      lane.push(...unbatched);
      await loop(s, steps);
      if (s.ctx.stop.aborted) await linger(s, steps);
    }
  } finally {
    await lane.finish();
    view?.stop();
    journal.close();
    s.close();
  }
  return summarize(s, pending, { batches: summaryOf(job, steps, file, lane.pushed) });
}

/** Until every chunk is collected (or the run is stopped): submit, look, collect, and at the deadline cancel. */
async function loop(s: Session, steps: Steps): Promise<void> {
  const o = s.o;
  const poll = o.pollMs ?? POLL_MS;
  let every = Math.min(1_000, poll);
  const failures = new Map<string, number>();
  // Chunks collected by an earlier run whose lines the output does not have yet (the run stopped mid-fallback).
  for (const c of steps.job.chunks.values()) if (c.collected) steps.lane.push(...steps.undone(c));
  for (;;) {
    if (s.ctx.stop.aborted) return;
    const now = s.ctx.now();
    const late = o.deadline !== undefined && now >= o.deadline;
    let open = 0;
    for (const [name, c] of steps.job.chunks) {
      if (s.ctx.stop.aborted) return;
      if (phaseOf(c) === "collected") continue;
      open += 1;
      try {
        await step(steps, name, c, late, mayGo(steps, c, now, poll));
        failures.delete(name);
      } catch (err) {
        // A step that failed is tried again at the next round; one that keeps failing ends the run (--resume goes on).
        const count = (failures.get(name) ?? 0) + 1;
        failures.set(name, count);
        if (err instanceof JobStopped || count >= MAX_FAILURES) throw err;
        if (s.ctx.abort.aborted) return;
        (o.progress?.stream ?? process.stderr).write(`[slotgate] ${name}: ${(err as Error).message} (tried again shortly)\n`);
      }
    }
    if (open === 0) return;
    await sleep(every, s.ctx.stop);
    every = Math.min(poll, every * 2);
  }
}

/** What the chunk's phase calls for now. */
async function step(steps: Steps, name: string, c: Chunk, late: boolean, may: boolean): Promise<void> {
  const phase = phaseOf(c);
  if (phase === "submitting") await steps.reconcile(name);
  else if (phase === "fallback") steps.fallback(name);
  else if (phase === "new" || phase === "queued") {
    if (late) steps.fallback(name);
    else if (may) await steps.submit(name);
  } else if (phase === "running") {
    if (late && !current(c)!.cancelled) await steps.cancel(name);
    await steps.poll(name);
  }
}

/**
 * A chunk goes when nothing ahead of it waits for queue room: a chunk refused for room goes again
 * once one of this job's batches has ended since, or, when none of them runs, after a wait that
 * doubles per refusal. A new chunk waits behind any chunk of its API that waits for room.
 */
function mayGo(steps: Steps, c: Chunk, now: number, poll: number): boolean {
  const chunks = [...steps.job.chunks.values()];
  const waiting = (x: Chunk) => phaseOf(x) === "queued" && x.plan.api === c.plan.api;
  if (phaseOf(c) === "new") return !chunks.some(waiting);
  const a = current(c)!;
  if (steps.lastEndedAt > a.submittedAt) return true;
  if (chunks.some((x) => phaseOf(x) === "running")) return false;
  const refusals = c.attempts.filter((t) => t.refused?.why === "queue").length;
  return now - a.submittedAt >= Math.min(600_000, Math.max(QUEUE_RETRY_MS, poll) * 2 ** (refusals - 1));
}

/** The client of each shape of batch API (the rows' `input`). */
const CLIENTS: Record<BatchApiRow["input"], (a: ApiContext) => BatchApi> = { file: fileBatchApi, inline: inlineBatchApi };

/** Each batch API, at its provider's base URL or the gateway's route for it. */
function apisFor(s: Session, ctx: SendContext): Record<Api, BatchApi> {
  const at = (p: string): ApiContext => ({ ctx, base: s.baseOf(p), headers: (url) => s.headersOf(p, url) });
  return Object.fromEntries(Object.entries(BATCH_API_ROWS).map(([api, row]) => [api, CLIENTS[row.input](at(api))])) as Record<Api, BatchApi>;
}

const running = (steps: Steps) => [...steps.job.chunks].filter(([, c]) => phaseOf(c) === "running").map(([name]) => name);

async function cancelAll(steps: Steps): Promise<void> {
  for (const name of running(steps)) if (!current(steps.job.chunks.get(name)!)!.cancelled) await steps.cancel(name);
}

/**
 * Stopped (Ctrl-C) with batches running: they are left running, and a second Ctrl-C within
 * `lingerMs` offers to cancel them (when someone can answer).
 */
async function linger(s: Session, steps: Steps): Promise<void> {
  const o = s.o;
  const names = running(steps);
  if (names.length === 0 || !o.confirm) return;
  const err = o.progress?.stream ?? process.stderr;
  const wait = o.lingerMs ?? 10_000;
  err.write(`[slotgate] ${names.length} batches are left running (their ids are in the state file); Ctrl-C again within ${Math.round(wait / 1000)} s to be offered to cancel them\n`);
  await sleep(wait, s.ctx.abort);
  if (!s.ctx.abort.aborted) return;
  if (await o.confirm(`Cancel the ${names.length} running batches? What they answered so far is kept; --resume collects it and runs the rest synchronously. [y/N] `)) {
    // The second Ctrl-C aborts calls in flight: the cancels go on a context of their own.
    steps.apis = apisFor(s, { ...s.ctx, stop: new AbortController().signal, abort: new AbortController().signal });
    await cancelAll(steps);
    err.write(`[slotgate] cancel asked for ${names.length} batches\n`);
  }
}
