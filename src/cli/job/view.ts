// What a provider-batch job shows while it runs (one row per batch: its state and its lines
// completed and failed of its total) and what it sums up at the end.
import type { BatchesSummary } from "../types";
import { type ProgressState, progressLine } from "../progress";
import type { BatchView } from "./api";
import { current, type Job, phaseOf } from "./journal";
import type { Steps } from "./steps";

export interface JobView {
  job: Job;
  views: Map<string, BatchView>;
  progress: ProgressState;
  /** Lines sent synchronously so far. */
  lane: number;
}

const n = (v: number) => v.toLocaleString("en-US");
const ROWS = 20;

/** One row per batch that exists, most recent state first seen by this run, else the state file's. */
export function rows(v: JobView): string[] {
  const out: string[] = [];
  for (const [name, c] of v.job.chunks) {
    const a = current(c);
    if (!a?.batchId) continue;
    const seen = v.views.get(name);
    const status = seen?.status ?? a.status ?? "submitted";
    const k = seen?.counts ?? a.counts ?? { total: c.plan.ids.length, done: 0, failed: 0 };
    const total = k.total || c.plan.ids.length;
    out.push(`${name} ${a.batchId} ${status.padEnd(11)} ${n(k.done)}/${n(total)} completed, ${n(k.failed)} failed${phaseOf(c) === "collected" ? " (collected)" : ""}`);
  }
  return out.length > ROWS ? [...out.slice(0, ROWS), `... and ${out.length - ROWS} more batches`] : out;
}

export interface Reporter {
  stop(): void;
}

/** On a TTY the rows redrawn in place twice a second; elsewhere every `plainEveryMs` (5 s) one line per batch and a total. */
export function startBatchView(get: () => JobView, opts: { stream: NodeJS.WriteStream; tty: boolean; plainEveryMs?: number }): Reporter {
  let drawn = 0;
  const draw = () => {
    const v = get();
    const lines = [...rows(v).map((r) => `  ${r}`), `${progressLine(v.progress, Date.now())}, ${n(v.lane)} sent synchronously`];
    if (!opts.tty) {
      opts.stream.write(`${lines.map((l) => (l.startsWith("  ") ? `[slotgate] ${l.trim()}` : l)).join("\n")}\n`);
      return;
    }
    // Back over the last drawing, then clear below it.
    opts.stream.write(`${drawn ? `\x1b[${drawn}A` : ""}\x1b[J${lines.join("\n")}\n`);
    drawn = lines.length;
  };
  const timer = setInterval(draw, opts.tty ? 500 : (opts.plainEveryMs ?? 5_000));
  return {
    stop: () => {
      clearInterval(timer);
      draw();
    },
  };
}

/** The batches by their last state, and where the lines' answers came from. */
export function summaryOf(job: Job, steps: Steps, stateFile: string, fallback: number): BatchesSummary {
  const byStatus: Record<string, number> = {};
  const running: string[] = [];
  for (const [name, c] of job.chunks) {
    const a = current(c);
    if (!a?.batchId) continue;
    const status = steps.views.get(name)?.status ?? a.status ?? "submitted";
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (phaseOf(c) === "running") running.push(a.batchId);
  }
  return { byStatus, answered: steps.answered, fallback, running, stateFile, notes: steps.notes };
}
