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

/** Admin input: every field optional. `limit` sets the current limit now (history reason `manual`). */
export type LimiterOverride = Partial<LimiterConfig & { limit: number }>;

type Rule = { int: boolean; lo: number; hi: number; open?: boolean };
const count: Rule = { int: true, lo: 1, hi: 100_000 };
const millis: Rule = { int: true, lo: 0, hi: 86_400_000 };
/** Bounds of each admin field; `open` excludes both ends. A table, not a validator library: the bundle stays small. */
const RULES: Record<keyof LimiterOverride, Rule> = {
  minConcurrency: count,
  startConcurrency: count,
  maxConcurrency: count,
  decreaseFactor: { int: false, lo: 0, hi: 1, open: true },
  scaleUpPercent: { int: false, lo: 0, hi: 100 },
  cooldownMs: millis,
  leaseTtlMs: { int: true, lo: 1_000, hi: 86_400_000 },
  limit: count,
};

/** Checks admin input: unknown fields and out-of-range values are named, `<field>: <reason>`. */
export function parseOverride(body: unknown): { ok: true; value: LimiterOverride } | { ok: false; error: string } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, error: "body: must be a JSON object" };
  const problems: string[] = [];
  const value: LimiterOverride = {};
  for (const [field, v] of Object.entries(body)) {
    const rule = Object.hasOwn(RULES, field) ? RULES[field as keyof LimiterOverride] : undefined;
    if (!rule) problems.push(`${field}: unknown field`);
    else if (typeof v !== "number" || !Number.isFinite(v)) problems.push(`${field}: must be a number`);
    else if (rule.int && !Number.isInteger(v)) problems.push(`${field}: must be an integer`);
    else if (rule.open ? v <= rule.lo || v >= rule.hi : v < rule.lo || v > rule.hi)
      problems.push(`${field}: must be ${rule.open ? "strictly between" : "within"} ${rule.open ? `${rule.lo} and ${rule.hi}` : `[${rule.lo}, ${rule.hi}]`}`);
    else value[field as keyof LimiterOverride] = v;
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
