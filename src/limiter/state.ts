import type { Tier } from "../providers/dialect";
// The core's own records: a held slot, an attempt's outcome, and what survives a restart.
import type { LimiterOverride } from "../config/limits";
import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import type { AimdState } from "./aimd";
import type { Metrics } from "./metrics";
import type { PaceState } from "./pace";
import type { OutState } from "./membership";
import type { Granted, QuotaState } from "./quota";
import type { TooLarge } from "./too-large";

export interface Lease {
  id: string;
  cost: number;
  /** Its output allowance (in memory only): what a window of generated tokens was charged. */
  out?: number;
  expiresAt: number;
  /** The quota's grant totals just after this grant (in memory only; see quota.observe). */
  mark?: Granted;
  /** In memory only, like `mark`: the grant's number, leases held with it, and when. */
  seq?: number;
  inFlight?: number;
  grantedAt?: number;
  /** Who it was granted to (in memory only: a restored lease counts for nobody). */
  caller?: string;
  /** Settled as a success: its hold time feeds the pace. */
  ok?: boolean;
  /** Settled as a whole answer: the provider is done with it, though the slot is not released yet. */
  done?: boolean;
  /** A ticket not used yet (tickets/): its slot is held, no request is out on it; when it lapses. */
  ticket?: number;
  /** A ticket's epoch at its issue (in memory only): a use after the epoch moved was of a ticket taken back. */
  epoch?: number;
}

export interface Outcome {
  cls: OutcomeClass;
  status: number;
  info: RateLimitInfo;
  latencyMs: number;
  attempt: number;
  final: boolean;
  /** A success whose body is still being generated (a stream): the provider is still busy with it. */
  streaming?: boolean;
  /** A refusal that will be retried: the lease id its retry comes with, which keeps a claim on the refill (claims.ts). */
  next?: string;
  /** How long before it reached the limiter the Worker saw this answer (it waited for a batch). */
  ageMs?: number;
  /** A pooled request's answer: the reason it takes the member out (hard quota, a refused key), if it does. */
  out?: string;
  /** With `out`: the first out's length in ms (POOL_OUT_MS); it doubles with each strike. */
  outMs?: number;
  /** With `out`: the request already took another member out, so this answer may keep a member out (a probe's) but not take one out. */
  confirmOnly?: boolean;
  /** A pooled request's answer: while the member is out only the probe's answer counts. */
  pooled?: boolean;
  /** The service tier it went at, when not standard: the key's outlook of that tier learns from it (tier-outlooks.ts). */
  tier?: Tier;
}

/** Queued, or turned away: past the deadline (`retryAfterMs`), out of its pool (`out`), or never to fit the key (`tooLarge`, too-large.ts). */
export type Admission = { kind: "queued" } | { kind: "rejected"; retryAfterMs: number; out?: boolean; tooLarge?: TooLarge };

/** What survives a restart: everything learned, nothing about who is waiting. */
export interface Persisted {
  aimd: AimdState;
  quota: QuotaState;
  cooldownUntil: number;
  metrics: Metrics;
  overrides: LimiterOverride;
  pace?: PaceState;
  /** A pool member's in/out state (membership.ts), without the probe in flight. */
  member?: OutState;
}
