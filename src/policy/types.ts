/** One quota window as the provider last reported it. `resetAt` is epoch ms; unknown parts are null. */
export interface QuotaReading {
  limit: number | null;
  remaining: number | null;
  resetAt: number | null;
}

/** Everything a response's headers (and, for a 429, its body) say about rate limits. */
export interface RateLimitInfo {
  /** Server's "wait this long before retrying" in ms, from whichever hint it sent; null when none. */
  retryAfterMs: number | null;
  requests: QuotaReading | null;
  /** Token quota: the combined window when sent, else the tighter of input/output. */
  tokens: QuotaReading | null;
}

/**
 * rate_limit: cut concurrency and hold every caller of the key; hard_quota: billing or daily
 * exhaustion, returned at once; transient: retried, never cuts; fatal: returned as is.
 */
export type OutcomeClass = "success" | "rate_limit" | "hard_quota" | "transient" | "fatal";
