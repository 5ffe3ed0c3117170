// A provider-batch job's state file (`<out>.batches.jsonl`): one event per line, appended and
// synced to disk before the step it records goes on, so that a crash at any moment leaves a file
// that says which lines belong to which batch. `fold` (pure) reads the events back into the job.
import { closeSync, existsSync, fdatasyncSync, openSync, readFileSync, writeSync } from "node:fs";
import type { Api } from "../../providers/lines";

/** The lines of one batch and where they go. `indexIds`: the API is sent `i<n>` for the n-th line (some custom_id did not fit its pattern: Anthropic's). */
export interface PlanEvent {
  e: "plan";
  chunk: string;
  api: Api;
  provider: string;
  url: string;
  model: string;
  ids: string[];
  indexIds?: boolean;
}

export type JobEvent =
  | { e: "job"; job: string; at: number }
  | PlanEvent
  /** About to create the chunk's batch (attempt n): a crash from here on may have created it. */
  | { e: "submit"; chunk: string; attempt: number; at: number }
  | { e: "file"; chunk: string; attempt: number; fileId: string }
  /** The batch exists: its lines are never submitted again. */
  | { e: "batch"; chunk: string; attempt: number; batchId: string; at: number }
  /**
   * The attempt made no batch that runs: `queue` (no room: submitted again later), `error` (its
   * lines go synchronously), `lost` (none was made: a crash before its create was recorded and no
   * batch of it found, or a refusal that stopped the job; submitted again).
   */
  | { e: "refused"; chunk: string; attempt: number; why: Why; code: string; message: string }
  | { e: "status"; chunk: string; attempt: number; status: string; counts: Counts }
  | { e: "cancel"; chunk: string; attempt: number; at: number }
  /** Its answers are in the output; the rest of its lines went (or go) synchronously. */
  | { e: "collected"; chunk: string; attempt: number };

export type Why = "queue" | "error" | "lost";

export interface Counts {
  total: number;
  done: number;
  failed: number;
}

export interface Attempt {
  n: number;
  submittedAt: number;
  fileId?: string;
  batchId?: string;
  refused?: { why: Why; code: string; message: string };
  status?: string;
  counts?: Counts;
  cancelled?: boolean;
}

export interface Chunk {
  plan: PlanEvent;
  attempts: Attempt[];
  collected: boolean;
}

export interface Job {
  job: string;
  chunks: Map<string, Chunk>;
}

/** The job the events describe. Events about a chunk or attempt it does not know are ignored. */
export function fold(events: Iterable<JobEvent>, fallbackJob: string): Job {
  const job: Job = { job: fallbackJob, chunks: new Map() };
  for (const ev of events) apply(job, ev);
  return job;
}

/** One event applied to the job. */
export function apply(job: Job, ev: JobEvent): void {
  if (ev.e === "job") {
    job.job = ev.job;
    return;
  }
  if (ev.e === "plan") {
    if (!job.chunks.has(ev.chunk)) job.chunks.set(ev.chunk, { plan: ev, attempts: [], collected: false });
    return;
  }
  const c = job.chunks.get(ev.chunk);
  if (!c) return;
  if (ev.e === "submit") {
    c.attempts.push({ n: ev.attempt, submittedAt: ev.at });
    return;
  }
  const a = c.attempts.find((x) => x.n === ev.attempt);
  if (!a) return;
  if (ev.e === "file") a.fileId = ev.fileId;
  else if (ev.e === "batch") a.batchId = ev.batchId;
  else if (ev.e === "refused") a.refused = { why: ev.why, code: ev.code, message: ev.message };
  else if (ev.e === "status") Object.assign(a, { status: ev.status, counts: ev.counts });
  else if (ev.e === "cancel") a.cancelled = true;
  else if (ev.e === "collected") c.collected = true;
}

/** The attempt that holds the chunk's lines now: its last one. */
export const current = (c: Chunk): Attempt | undefined => c.attempts.at(-1);

/** What a chunk waits for. */
export type Phase = "new" | "submitting" | "running" | "queued" | "fallback" | "collected";

export function phaseOf(c: Chunk): Phase {
  if (c.collected) return "collected";
  const a = current(c);
  if (!a) return "new";
  if (a.refused) return ({ queue: "queued", error: "fallback", lost: "new" } as const)[a.refused.why];
  return a.batchId ? "running" : "submitting";
}

export class Journal {
  readonly path: string;
  private fd: number;
  private first = true;

  /** Reads what an earlier run left (a torn last line, from a crash mid-write, is dropped) and opens the file to add to it. */
  constructor(path: string) {
    this.path = path;
    this.fd = openSync(path, "a");
  }

  static read(path: string): JobEvent[] {
    if (!existsSync(path)) return [];
    const out: JobEvent[] = [];
    for (const line of readFileSync(path, "utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        out.push(JSON.parse(line) as JobEvent);
      } catch {
        // a line cut short by a crash: what it recorded had not happened yet as far as anyone knows
      }
    }
    return out;
  }

  /** Appends one event and waits until the disk has it. */
  add(ev: JobEvent): void {
    // A line torn by a crash would glue onto the first one this run adds: that one starts a line of its own.
    const buf = Buffer.from(`${this.first ? "\n" : ""}${JSON.stringify(ev)}\n`, "utf8");
    this.first = false;
    for (let off = 0; off < buf.length; ) off += writeSync(this.fd, buf, off, buf.length - off);
    fdatasyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The state file beside `--out`. */
export const journalPath = (out: string): string => `${out}.batches.jsonl`;
