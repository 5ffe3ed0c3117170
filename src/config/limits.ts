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
  /** One attempt's wait for the provider's response headers (and a plain answer's body). */
  upstreamTimeoutMs: number;
  /** Longest silence between two chunks of a streamed answer. */
  streamIdleMs: number;
  /** Request bodies one isolate may hold while their requests wait; past it new ones get 503 `overloaded`. */
  bodyBudgetBytes: number;
  /** How long a request's body may take to arrive; past it, 408 `request_timeout`. */
  bodyTimeoutMs: number;
  /** How long a pool member is out after hard quota, 401 or 403, the first time; doubled per strike. */
  poolOutMs: number;
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
  upstreamTimeoutMs: 300_000,
  streamIdleMs: 120_000,
  bodyBudgetBytes: 48 * 1024 * 1024,
  bodyTimeoutMs: 60_000,
  poolOutMs: 10_000,
};

/** Admin input: every field optional. `limit` sets the current limit now (history reason `manual`). */
export type LimiterOverride = Partial<LimiterConfig & { limit: number }>;

/** A setting's allowed values, both ends included. A table, not a validator library: the bundle stays small. */
export type Rule = { int: boolean; lo: number; hi: number };
const count: Rule = { int: true, lo: 1, hi: 100_000 };
const millis: Rule = { int: true, lo: 0, hi: 86_400_000 };

/**
 * The one table of ranges: env parsing (config/env.ts) and the admin API both check against it,
 * so a value one accepts the other never refuses.
 */
export const LIMITER_RULES: Record<keyof LimiterConfig, Rule> = {
  minConcurrency: count,
  startConcurrency: count,
  maxConcurrency: count,
  decreaseFactor: { int: false, lo: 0.01, hi: 0.99 },
  scaleUpPercent: { int: false, lo: 1, hi: 100 },
  cooldownMs: millis,
  leaseTtlMs: { int: true, lo: 1_000, hi: 86_400_000 },
};

export const GATEWAY_RULES: Record<keyof GatewayConfig, Rule> = {
  maxAttempts: { int: true, lo: 1, hi: 100 },
  baseBackoffMs: { int: true, lo: 0, hi: 600_000 },
  maxBackoffMs: { int: true, lo: 0, hi: 3_600_000 },
  deadlineMs: { int: true, lo: 1, hi: 86_400_000 },
  maxBodyBytes: { int: true, lo: 1, hi: 100 * 1024 * 1024 },
  upstreamTimeoutMs: { int: true, lo: 1, hi: 86_400_000 },
  streamIdleMs: { int: true, lo: 1, hi: 86_400_000 },
  bodyBudgetBytes: { int: true, lo: 1, hi: 1024 * 1024 * 1024 },
  bodyTimeoutMs: { int: true, lo: 1, hi: 3_600_000 },
  poolOutMs: { int: true, lo: 1, hi: 3_600_000 },
};

const RULES: Record<keyof LimiterOverride, Rule> = { ...LIMITER_RULES, limit: count };

/** Why `v` breaks `rule`, or null when it fits. */
export function outOfRange(v: number, rule: Rule): string | null {
  if (!Number.isFinite(v)) return "must be a number";
  if (rule.int && !Number.isInteger(v)) return "must be an integer";
  if (v < rule.lo || v > rule.hi) return `must be within [${rule.lo}, ${rule.hi}]`;
  return null;
}

/** Checks admin input: unknown fields and out-of-range values are named, `<field>: <reason>`. */
export function parseOverride(body: unknown): { ok: true; value: LimiterOverride } | { ok: false; error: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, error: "body: must be a JSON object" };
  const problems: string[] = [];
  const value: LimiterOverride = {};
  for (const [field, v] of Object.entries(body)) {
    const rule = Object.hasOwn(RULES, field) ? RULES[field as keyof LimiterOverride] : undefined;
    if (!rule) problems.push(`${field}: unknown field`);
    else {
      const why = typeof v === "number" ? outOfRange(v, rule) : "must be a number";
      if (why) problems.push(`${field}: ${why}`);
      else value[field as keyof LimiterOverride] = v;
    }
  }
  return problems.length ? { ok: false, error: problems.join("; ") } : { ok: true, value };
}

/**
 * Returns the reason the merged config is inconsistent, or null. A start outside [min, max] is
 * not an error: it is clamped, so lowering the max alone never trips over the default start.
 */
export function checkBounds(c: LimiterConfig): string | null {
  if (c.minConcurrency > c.maxConcurrency) return "minConcurrency must not exceed maxConcurrency";
  return null;
}
