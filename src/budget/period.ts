// Budget periods, in UTC. Pure: time is an argument.

export const PERIODS = ["day", "month", "total"] as const;
export type Period = (typeof PERIODS)[number];

export const isPeriod = (v: unknown): v is Period => typeof v === "string" && (PERIODS as readonly string[]).includes(v);

/** When the period that `t` (epoch ms) falls in began: midnight UTC, the 1st of the month UTC, or 0 for `total`. */
export function periodStart(period: Period, t: number): number {
  if (period === "total") return 0;
  const d = new Date(t);
  return period === "day" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
