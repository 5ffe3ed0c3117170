import type { OutcomeClass } from "./types";

/** Full jitter: uniform in [0, min(max, base·2^(attempt-1))), so callers hit by one 429 spread out. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** (Math.max(1, attempt) - 1));
  const x = random();
  const r = x > 0 ? Math.min(x, 1) : 0; // a bad random source (NaN, <0, >1) must not yield odd waits
  return r * ceiling;
}

export type RetryDecision =
  | { retry: true; delayMs: number }
  | { retry: false; reason: "not_retryable" | "attempts_exhausted" | "deadline" | "hint_past_deadline" };

export interface RetryInput {
  cls: OutcomeClass;
  /** The attempt that just failed, from 1. */
  attempt: number;
  maxAttempts: number;
  /** Server's wait hint in ms (retry-after and friends), or null. */
  hintMs: number | null;
  now: number;
  /** Epoch ms by which the caller must have its answer. */
  deadline: number;
  baseMs: number;
  maxMs: number;
  random: () => number;
}

/** Whether to try again after a failed attempt, and after how long. */
export function decideRetry(input: RetryInput): RetryDecision {
  const { cls, attempt, maxAttempts, hintMs, now, deadline } = input;
  if (cls !== "rate_limit" && cls !== "transient" && cls !== "capacity") return { retry: false, reason: "not_retryable" };
  if (attempt >= maxAttempts) return { retry: false, reason: "attempts_exhausted" };
  // The provider knows when it will accept us again; its hint beats our guess and is not capped
  // by maxMs. If it lands past the deadline, waiting is pointless: the caller gets the 429 and the
  // provider's retry-after now, so its own scheduler can decide.
  if (hintMs !== null && Number.isFinite(hintMs) && hintMs >= 0) {
    return now + hintMs > deadline ? { retry: false, reason: "hint_past_deadline" } : { retry: true, delayMs: hintMs };
  }
  const delayMs = backoffDelay(attempt, input.baseMs, input.maxMs, input.random);
  return now + delayMs > deadline ? { retry: false, reason: "deadline" } : { retry: true, delayMs };
}
