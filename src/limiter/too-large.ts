/**
 * @module A request that can never fit its key: its cost is above a tokens window's limit that the
 * provider told in its headers and refuses larger requests against outright (the dialect's window
 * says so: OpenAI's "Request too large" 429, Groq's 413). Waiting for the window would hold the
 * key's queue up to a period and end in that refusal anyway, so it is refused at once, nothing
 * sent. Only a told limit, and a recent one, refuses: a learned window (no limit told, or learned
 * from refusals) is an estimate that may be too low, and a limit raised since an old reading would
 * refuse forever; such a request waits for the window to be full, as any larger than it does, and
 * the provider decides. Pure: time is passed in.
 */
import type { QuotaState } from "./quota";

/** A told limit older than this says too little of today's to refuse on: the request goes, and its answer tells again. */
export const TOLD_FRESH_MS = 60 * 60 * 1000;

/** Why a request can never fit: the window's limit, over its period, against the request's cost. */
export interface TooLarge {
  cost: number;
  limit: number;
  periodMs: number;
}

/** The window a request of `cost` can never fit, or null. */
export function neverFits(q: QuotaState, cost: number, now: number): TooLarge | null {
  const w = q.tokens;
  if (!w?.refusesLarger || w.source === "refusals" || w.limit === null || !(cost > w.limit)) return null;
  if (w.readAt === undefined || now - w.readAt > TOLD_FRESH_MS) return null;
  return { cost, limit: w.limit, periodMs: w.periodMs ?? 60_000 };
}
