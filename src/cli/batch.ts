import { UsageError } from "./input";
import { Journal, journalPath } from "./job/journal";
import { runProviderJob } from "./job/run";
import { fileItems, progressOf, summarize } from "./pending";
import { startReporter } from "./progress";
import { openSession } from "./session";
import type { BatchOptions, BatchSummary } from "./types";

export type { BatchOptions, BatchSummary } from "./types";
export { defaultCaller } from "./session";

/**
 * Runs a JSONL file of OpenAI-batch lines and appends one output line per item as it finishes.
 * `mode` sync (the default) sends every line through the limiter (or the gateway); provider and
 * auto submit them to the providers' batch APIs (job/run.ts). Throws UsageError (exit 2) before
 * anything is sent when the input has duplicate custom_ids, a credential is missing, or the
 * output holds results and resume is off.
 */
export async function runBatch(o: BatchOptions): Promise<BatchSummary> {
  const mode = o.mode ?? "sync";
  // Lines of a provider job may be in batches still running: sent synchronously too, they would be paid twice.
  const batched = !o.cancel && Journal.read(journalPath(o.out)).some((e) => e.e === "batch");
  if ((mode === "sync" || mode === "flex") && batched)
    throw new UsageError(`${journalPath(o.out)} names provider batches of this output: resume it with --mode provider (or auto), or choose another --out`);
  // auto: a deadline within a batch's completion window is met at flex, synchronously; else batches.
  const flex = mode === "flex" || (mode === "auto" && !batched && !o.cancel && flexByDeadline(o.deadline, (o.now ?? Date.now)()));
  const session = await openSession(flex ? { ...o, mode: "flex" } : o);
  if ((mode !== "sync" && !flex) || o.cancel) return runProviderJob(session, mode === "sync" ? "provider" : (mode as "provider" | "auto"));
  const pending = session.entries.filter((e) => !session.done.has(e.id)).length;
  const reporter = o.progress ? startReporter(() => progressOf(session, pending), o.progress) : null;
  try {
    await session.sync(fileItems(session));
  } finally {
    reporter?.stop();
    session.close();
  }
  return summarize(session, pending);
}

/** A provider batch may take until its completion window ends (24 h): a deadline within it is met at flex instead. */
export const BATCH_WINDOW_MS = 24 * 3_600_000;

/** `--mode auto`: whether the job runs synchronously at flex rather than in provider batches. */
export const flexByDeadline = (deadline: number | undefined, now: number) => deadline !== undefined && deadline - now < BATCH_WINDOW_MS;
