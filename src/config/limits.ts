import { z } from "zod";

/** Per-key limiter settings: defaults come from vars, overrides from `PUT /admin/keys/:key/config`. */
export interface LimiterConfig {
  minConcurrency: number;
  startConcurrency: number;
  maxConcurrency: number;
  decreaseFactor: number;
  scaleUpPercent: number;
  cooldownMs: number;
  leaseTtlMs: number;
}

/** Settings the Worker applies per request. */
export interface GatewayConfig {
  maxAttempts: number;
  baseBackoffMs: number;
  maxBackoffMs: number;
  deadlineMs: number;
  maxBodyBytes: number;
}

/** Defaults of every setting; wrangler.toml's [vars] repeat them for operators to see. */
export const DEFAULT_LIMITER: LimiterConfig = {
  minConcurrency: 1,
  startConcurrency: 16,
  maxConcurrency: 256,
  decreaseFactor: 0.5,
  scaleUpPercent: 80,
  cooldownMs: 5_000,
  leaseTtlMs: 60_000,
};

export const DEFAULT_GATEWAY: GatewayConfig = {
  maxAttempts: 8,
  baseBackoffMs: 500,
  maxBackoffMs: 30_000,
  deadlineMs: 120_000,
  maxBodyBytes: 10 * 1024 * 1024,
};

const count = z.number().int().min(1).max(100_000);
const millis = z.number().int().min(0).max(86_400_000);

/** Admin input: every field optional, unknown fields rejected, min <= max checked on the merge. */
export const limiterOverrideSchema = z
  .object({
    minConcurrency: count,
    startConcurrency: count,
    maxConcurrency: count,
    decreaseFactor: z.number().gt(0).lt(1),
    scaleUpPercent: z.number().gt(0).max(100),
    cooldownMs: millis,
    leaseTtlMs: z.number().int().min(1_000).max(86_400_000),
    /** Sets the current limit now (history reason `manual`); kept within [min, max]. */
    limit: count,
  })
  .partial()
  .strict();

export type LimiterOverride = z.infer<typeof limiterOverrideSchema>;

/**
 * Returns the reason the merged config is inconsistent, or null. A start outside [min, max] is
 * not an error: it is clamped, so lowering the max alone never trips over the default start.
 */
export function checkBounds(c: LimiterConfig): string | null {
  if (c.minConcurrency > c.maxConcurrency) return "minConcurrency must not exceed maxConcurrency";
  return null;
}
