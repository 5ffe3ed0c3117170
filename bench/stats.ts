// Small numeric helpers and the row model every scenario reports in.

/** Nearest-rank percentile of an ascending array (0 for none). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export interface Spread {
  n: number;
  mean: number;
  p50: number;
  p99: number;
}

export function spread(xs: readonly number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  const mean = s.length ? s.reduce((a, b) => a + b, 0) / s.length : 0;
  return { n: s.length, mean, p50: percentile(s, 50), p99: percentile(s, 99) };
}

export const share = (part: number, whole: number) => (whole > 0 ? part / whole : 0);
export const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)}%`;
export const ms = (x: number) => (x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(1)} ms`);
export const secs = (x: number) => `${(x / 1000).toFixed(1)} s`;
export const times = (x: number) => `${x.toFixed(2)}x`;
export const perSec = (x: number) => `${Math.round(x).toLocaleString("en-US")}/s`;

/** One line of the table: a figure beside its baseline, and the target it is held to, if any. */
export interface Row {
  scenario: string;
  metric: string;
  baseline: string;
  value: string;
  target?: string;
  pass?: boolean;
}

/** A target row: `pass` is decided from the raw number, the text shows it rounded. */
export function goal(row: Omit<Row, "pass" | "target">, target: string, pass: boolean): Row {
  return { ...row, target, pass };
}
