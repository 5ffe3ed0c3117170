// A run's lines against its output: the lines still to answer, its progress, and its closing
// figures. What the synchronous run (batch.ts) and a provider job (job/run.ts) both read.
import { DEFAULT_LINE_PROVIDER } from "../providers/lines";
import type { Item } from "./input";
import { parseLine, readLines } from "./input";
import { outputLine } from "./output";
import type { ProgressState } from "./progress";
import type { Session } from "./session";
import type { BatchSummary, OutputLine } from "./types";

/** The input's lines not yet answered: an item to send, or the error line of a line that cannot be sent. */
export async function* fileItems(s: Session, keep: (it: Item) => boolean = () => true): AsyncGenerator<Item | OutputLine> {
  const provider = s.o.provider ?? DEFAULT_LINE_PROVIDER;
  for await (const { line, text } of readLines(s.o.input)) {
    if (text.trim() === "") continue;
    const parsed = parseLine(text, line, provider);
    const id = parsed.ok ? parsed.item.customId : parsed.bad.customId;
    if (s.done.has(id)) continue;
    if (!parsed.ok) yield outputLine(id, null, { code: "invalid_line", message: parsed.bad.message });
    else if (keep(parsed.item)) yield parsed.item;
  }
}

export function progressOf(s: Session, total: number): ProgressState {
  const c = s.ctx.counters;
  return {
    total, succeeded: s.tally.succeeded, failed: s.tally.failed, inFlight: c.inFlight, waiting: Math.max(0, s.pool.open - c.inFlight), absorbed429: c.absorbed429, startedAt: s.startedAt,
  };
}

/** The closing figures; `pending`: the lines this run had to answer. */
export function summarize(s: Session, pending: number, extra: Partial<BatchSummary> = {}): BatchSummary {
  const t = s.tally;
  const answered = t.succeeded + t.failed + t.interrupted;
  const lines = s.entries.length;
  return {
    out: s.o.out, lines, skipped: lines - pending,
    succeeded: t.succeeded, failed: t.failed, failedByReason: t.byReason, retryable: t.retryable,
    notDone: pending - answered + t.interrupted,
    absorbed429: s.ctx.counters.absorbed429, retries: s.ctx.counters.retries, wallMs: s.ctx.now() - s.startedAt, stopped: s.ctx.stop.aborted,
    spend: s.spend.s, credentials: s.credentialVars, ...extra,
  };
}
