// When a limiter writes its pending usage to the ledger, and which records a write carries. Pure:
// time comes in as an argument, batch ids from the caller.

/** After a failed write the batch is sent again this much later. */
export const RETRY_MS = 30_000;
/**
 * Records one write carries at most (so at most this many rows in one D1 batch); a longer backlog
 * (after an outage) goes in several writes, one right after another.
 */
export const BATCH_MAX = 10_000;

/**
 * A write to the ledger: the outbox's records up to sequence number `last`, under an id that stays
 * the same on every try, across restarts, until D1 has answered (the ledger adds a batch id once).
 */
export interface Batch {
  id: string;
  last: number;
}

/**
 * The batch to write: the open one again, same id and same records (its last try failed, or its
 * reply was lost, or the object restarted during it); else a new one over the oldest pending
 * records, at most BATCH_MAX of them. `lastOf(n)`: the sequence number of the n-th oldest record.
 */
export function nextBatch(open: Batch | null, pending: number, lastOf: (n: number) => number, mint: () => string): { batch: Batch; cut: boolean } | null {
  if (open) return { batch: open, cut: false };
  if (pending === 0) return null;
  const cut = pending > BATCH_MAX;
  return { batch: { id: mint(), last: lastOf(cut ? BATCH_MAX : pending) }, cut };
}

export interface Schedule {
  /** When the oldest record no batch has taken arrived; null: none. */
  firstAt: number | null;
  /** When the open batch's last try failed; null: it did not. */
  failedAt: number | null;
}

export const IDLE: Schedule = { firstAt: null, failedAt: null };

/** A record came in at `at`: the first since the last batch starts the wait. */
export const received = (s: Schedule, at: number): Schedule => (s.firstAt === null ? { ...s, firstAt: at } : s);

/** A new batch took the pending records; `cut`: only the oldest, the rest are already due. */
export const taken = (s: Schedule, cut: boolean): Schedule => (cut ? s : { ...s, firstAt: null });

export const written = (s: Schedule): Schedule => ({ ...s, failedAt: null });

export const failed = (s: Schedule, now: number): Schedule => ({ ...s, failedAt: now });

/**
 * When the next write is due (null: nothing to write): RETRY_MS after a failed try, else `everyMs`
 * after the first record waiting. Past times mean now.
 */
export function flushDue(s: Schedule, pending: number, everyMs: number): number | null {
  if (pending === 0) return null;
  if (s.failedAt !== null) return s.failedAt + RETRY_MS;
  return s.firstAt === null ? null : s.firstAt + everyMs;
}

/**
 * How many of the oldest records go when the outbox holds more than `max` (the ledger cannot be
 * written for a long while): enough to get `step` below it, so the scan that finds them runs once
 * per `step` records, not per record.
 */
export const overflow = (pending: number, max: number, step: number): number => (pending > max ? pending - max + step : 0);
