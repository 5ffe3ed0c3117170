/** One quota window as the provider last reported it. `resetAt` is epoch ms; unknown parts are null. */
export interface QuotaReading {
  limit: number | null;
  remaining: number | null;
  resetAt: number | null;
  /** How long the window's limit is counted over (its dialect's row): a minute when absent. */
  periodMs?: number;
  /** An allowance that does not come back before its reset (a month's, a day's cap). */
  cap?: boolean;
  /** The provider refuses one request above this limit outright (its dialect's window says so). */
  refusesLarger?: boolean;
}

/**
 * What a refusal's body says of the limit it hit, when no header told the window: Gemini's
 * `QuotaFailure` (the quota's kind and period from its `quotaId`, its limit from `quotaValue`), a
 * message that names its quota (Vertex's, Bedrock's: the kind), or else the dialect's period for a
 * refusal. A key with no limit headers is paced from these. `output`: generated tokens alone.
 */
export interface RefusedLimit {
  kind: "requests" | "tokens" | "output";
  periodMs: number;
  limit: number | null;
}

/** Everything a response's headers (and, for a refusal, its body) say about rate limits. */
export interface RateLimitInfo {
  /** Server's "wait this long before retrying" in ms, from whichever hint it sent; null when none. */
  retryAfterMs: number | null;
  requests: QuotaReading | null;
  /** Token quota: the combined window when sent, else the tightest of the ones the dialect reads. */
  tokens: QuotaReading | null;
  /**
   * Generated tokens alone, where a provider limits them apart from the prompt's (Fireworks'
   * "Generated TPM", Anthropic's OTPM): charged with a request's output allowance. Absent: none told.
   */
  output?: QuotaReading | null;
  /** On an error answer: the limit it speaks for (see RefusedLimit). */
  refused?: RefusedLimit;
}

/**
 * rate_limit: cut concurrency and hold every caller of the key; capacity: the provider (or a tier)
 * is full: retried after a backoff, never cuts, never shuts the key's gate; hard_quota: spent
 * credits, balance, a spending limit or a day's or month's cap, returned at once; transient:
 * retried, never cuts; too_large: one request above the key's limit, returned as is, never
 * retried, never cuts or shuts the gate; fatal: returned as is.
 */
export type OutcomeClass = "success" | "rate_limit" | "capacity" | "hard_quota" | "transient" | "too_large" | "fatal";
