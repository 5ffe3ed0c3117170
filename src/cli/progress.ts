import cliProgress from "cli-progress";
import type { BatchSummary } from "./types";
import type { BatchesSummary } from "./types";
import { spendRows } from "./spend";

/** What the runner knows at one moment. */
export interface ProgressState {
  /** Items this run has to answer (input lines minus those already answered). */
  total: number;
  succeeded: number;
  failed: number;
  inFlight: number;
  /** Waiting for a slot or a back-off to end. */
  waiting: number;
  absorbed429: number;
  startedAt: number;
}

export interface Reporter {
  /** Shows the final state and stops refreshing. */
  stop(): void;
}

/** Finished per second since the start, and the time left at that pace. */
function pace(s: ProgressState, now: number): { rate: string; eta: string } {
  const finished = s.succeeded + s.failed;
  const secs = Math.max(0.001, (now - s.startedAt) / 1000);
  const rate = finished / secs;
  const left = s.total - finished;
  return { rate: rate.toFixed(1), eta: rate > 0 ? duration((left / rate) * 1000) : left === 0 ? "0s" : "?" };
}

export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** One plain line, for logs and pipes. */
export function progressLine(s: ProgressState, now: number): string {
  const { rate, eta } = pace(s, now);
  const done = s.succeeded + s.failed;
  return `[slotgate] ${done}/${s.total} done (${s.failed} failed), ${s.inFlight} in flight, ${s.waiting} waiting, ${rate}/s, ETA ${eta}`;
}

/**
 * On a TTY a bar (cli-progress) redrawn a few times a second; elsewhere a plain line every
 * `plainEveryMs`, so a CI log shows the run moving without a wall of carriage returns.
 */
export function startReporter(
  get: () => ProgressState,
  opts: { stream: NodeJS.WriteStream; tty: boolean; plainEveryMs?: number; now?: () => number },
): Reporter {
  const now = opts.now ?? Date.now;
  if (!opts.tty) {
    const timer = setInterval(() => opts.stream.write(`${progressLine(get(), now())}\n`), opts.plainEveryMs ?? 5_000);
    return { stop: () => clearInterval(timer) };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream: opts.stream,
      format: "{bar} {percentage}% | {value}/{total} done | {failed} failed | {inFlight} in flight | {rate}/s | ETA {etaText}",
      hideCursor: true,
      barsize: 30,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const payload = (s: ProgressState) => {
    const { rate, eta } = pace(s, now());
    return { failed: s.failed, inFlight: s.inFlight, rate, etaText: eta };
  };
  const first = get();
  bar.start(Math.max(first.total, 0), first.succeeded + first.failed, payload(first));
  const timer = setInterval(() => {
    const s = get();
    bar.update(s.succeeded + s.failed, payload(s));
  }, 200);
  return {
    stop: () => {
      clearInterval(timer);
      const s = get();
      bar.update(s.succeeded + s.failed, payload(s));
      bar.stop();
    },
  };
}

/** The closing report: one row per figure, reasons spelled out. */
export function formatSummary(s: BatchSummary): string {
  const reasons = Object.entries(s.failedByReason).sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`);
  const rows: [string, string][] = [
    ["succeeded", String(s.succeeded)],
    ["failed", `${s.failed}${reasons.length ? `  (${reasons.join(", ")})` : ""}`],
  ];
  if (s.retryable > 0) rows.push(["  retryable", `${s.retryable}  (rate limit or transient errors that ran out of attempts; --resume runs them again)`]);
  if (s.notDone > 0 || s.stopped) rows.push(["not done", `${s.notDone}  (stopped before an answer; --resume runs them)`]);
  if (s.skipped > 0) rows.push(["skipped", `${s.skipped}  (already answered in ${s.out})`]);
  if (s.batches) rows.push(...batchRows(s.batches));
  rows.push(...spendRows(s.spend));
  rows.push(["429s absorbed", String(s.absorbed429)], ["retries", String(s.retries)], ["wall time", duration(s.wallMs)], ["output", s.out]);
  const head = `slotgate batch ${s.stopped ? "stopped" : "finished"}: ${s.lines} lines`;
  return [head, ...rows.map(([k, v]) => `  ${k.padEnd(16)}${v}`)].join("\n");
}

/** Provider mode: the batches by state, where the answers came from, what is left running. */
function batchRows(b: BatchesSummary): [string, string][] {
  const states = Object.entries(b.byStatus).map(([st, k]) => `${k} ${st}`).join(", ") || "none";
  const rows: [string, string][] = [
    ["batches", states],
    ["answered by", `batch ${b.answered}, synchronously ${b.fallback} (failed, expired or cancelled in a batch, or no batch API)`],
  ];
  if (b.running.length > 0) rows.push(["still running", `${b.running.join(", ")}  (--resume attaches to them)`]);
  for (const note of b.notes) rows.push(["note", note]);
  rows.push(["state file", b.stateFile]);
  return rows;
}
