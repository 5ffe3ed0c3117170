// An attempt under way, as the retry loop's steps (steps.ts, tier-step.ts) pass it between them.
import type { AttemptSpan } from "../observe/spans";
import type { Tier } from "../providers/dialect";
import type { AttemptTimer } from "./attempt-timer";
import type { LimiterCalls } from "./limiter-client";
import type { Target } from "./target";

/** An attempt under way: its slot, its time limits and its renewals. */
export interface Slot {
  at: Target;
  /** The tier it was sent at, and the limiter its lease is in (a tier with limits of its own has its own). */
  tier: Tier;
  limiter: LimiterCalls;
  leaseId: string;
  /** Its number among the request's attempts (1-based). */
  attempt: number;
  timer: AttemptTimer;
  /** Stops the lease's renewals and the attempt's timers. */
  stop: () => void;
  /** When it was sent. */
  sent: number;
  /** Its span, when the request is traced. */
  span?: AttemptSpan;
}
