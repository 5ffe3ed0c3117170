// A provider batch's life as a function of the clock. Pure: the time comes in, nothing is stored.
//
//   validating (validatingMs) → in_progress (lines end one by one over turnaroundMs)
//     → finalizing (finalizingMs) → completed
// A batch refused at validation (its input, or no room in the enqueued-token limit) is `failed`
// once validation ends. One still running at its expiry is `expired` there; one cancelled is
// `cancelling` for finalizingMs, then `cancelled`. Lines ended before expiry or cancel keep their answers.

export type BatchStatus = "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" | "cancelling" | "cancelled";

export interface Clock {
  createdAt: number;
  lines: number;
  validatingMs: number;
  turnaroundMs: number;
  finalizingMs: number;
  /** The completion window's end (epoch ms). */
  expiresAt: number;
  /** Refused at validation: it fails when validation ends and runs nothing. */
  refused: boolean;
  /** When a cancel was asked (epoch ms), or null. */
  cancelAt: number | null;
}

export interface Progress {
  status: BatchStatus;
  /** Lines that have ended (their answer or their failure is made). */
  ended: number;
  /** Epoch ms of each stage reached so far (null: not reached). */
  inProgressAt: number | null;
  finalizingAt: number | null;
  completedAt: number | null;
  failedAt: number | null;
  expiredAt: number | null;
  cancellingAt: number | null;
  cancelledAt: number | null;
}

/** When line `i` (0-based) of `c` ends, if nothing stops the batch first. */
export const lineEndsAt = (c: Clock, i: number): number => c.createdAt + c.validatingMs + ((i + 1) * c.turnaroundMs) / Math.max(1, c.lines);

/** Lines ended by `t` (epoch ms). */
function endedBy(c: Clock, t: number): number {
  const start = c.createdAt + c.validatingMs;
  if (t < start || c.refused) return 0;
  if (c.turnaroundMs <= 0) return c.lines;
  return Math.min(c.lines, Math.floor(((t - start) * c.lines) / c.turnaroundMs + 1e-9));
}

export function progress(c: Clock, now: number): Progress {
  const p: Progress = {
    status: "validating", ended: 0, inProgressAt: null, finalizingAt: null, completedAt: null, failedAt: null,
    expiredAt: null, cancellingAt: null, cancelledAt: null,
  };
  const validated = c.createdAt + c.validatingMs;
  const allEnded = validated + c.turnaroundMs;
  // What stops it early: a cancel or the window's end, whichever comes first, if before the lines end.
  const cancel = c.cancelAt !== null && c.cancelAt < allEnded ? c.cancelAt : null;
  const expiry = c.expiresAt < allEnded ? c.expiresAt : null;
  const stop = Math.min(cancel ?? Infinity, expiry ?? Infinity);

  if (c.refused) {
    if (cancel !== null && cancel < validated && now >= cancel) return cancelled(p, c, cancel, now, 0);
    if (now >= validated) Object.assign(p, { status: "failed", failedAt: validated });
    return p;
  }
  if (now >= validated && validated < stop) p.inProgressAt = validated;
  if (now < Math.min(validated, stop)) return p;
  if (stop !== Infinity && now >= stop) {
    const ended = endedBy(c, stop);
    if (stop === cancel) return cancelled(p, c, stop, now, ended);
    return Object.assign(p, { status: "expired", ended, expiredAt: stop });
  }
  p.status = "in_progress";
  p.ended = endedBy(c, now);
  if (now < allEnded) return p;
  p.ended = c.lines;
  p.finalizingAt = allEnded;
  p.status = "finalizing";
  if (now >= allEnded + c.finalizingMs) Object.assign(p, { status: "completed", completedAt: allEnded + c.finalizingMs });
  return p;
}

function cancelled(p: Progress, c: Clock, at: number, now: number, ended: number): Progress {
  Object.assign(p, { status: "cancelling", ended, cancellingAt: at });
  if (now >= at + c.finalizingMs) Object.assign(p, { status: "cancelled", cancelledAt: at + c.finalizingMs });
  return p;
}

/** The batch is over: its output and error files are final. */
export const isEnded = (s: BatchStatus): boolean => s === "completed" || s === "failed" || s === "expired" || s === "cancelled";
