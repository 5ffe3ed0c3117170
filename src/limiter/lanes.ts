// Priority lanes: what `x-slotgate-priority` names and how `PRIORITY_WEIGHTS` weighs them.
// Shared by the Worker (which refuses bad input) and the limiter (which schedules by them).

export const LANES = ["high", "normal", "low"] as const;
export type Lane = (typeof LANES)[number];

/** Weights of high, normal and low: shares when every lane has work waiting, never strict. */
export type LaneWeights = Record<Lane, number>;

export const DEFAULT_WEIGHTS: LaneWeights = { high: 8, normal: 4, low: 1 };
/** A weight above this would starve the other lanes in all but name. */
const MAX_WEIGHT = 1_000;

export const isLane = (x: unknown): x is Lane => typeof x === "string" && (LANES as readonly string[]).includes(x);

/**
 * `PRIORITY_WEIGHTS` as `high:normal:low`, e.g. `8:4:1`: three positive numbers up to 1,000.
 * Unset or empty gives the defaults. Returns the weights, or the reason they are refused.
 */
export function parseWeights(raw: string | undefined): LaneWeights | string {
  if (raw === undefined || raw.trim() === "") return DEFAULT_WEIGHTS;
  const parts = raw.split(":").map((p) => p.trim());
  const nums = parts.map(Number);
  const ok = parts.length === 3 && parts.every((p) => /^\d+(\.\d+)?$/.test(p)) && nums.every((n) => n > 0 && n <= MAX_WEIGHT);
  if (!ok) return `PRIORITY_WEIGHTS must be three positive numbers up to ${MAX_WEIGHT} as high:normal:low (e.g. 8:4:1)`;
  return { high: nums[0]!, normal: nums[1]!, low: nums[2]! };
}

/** For the limiter: the Worker has refused a bad value already, so a bad one here means the defaults. */
export function weightsOrDefault(raw: string | undefined): LaneWeights {
  const w = parseWeights(raw);
  return typeof w === "string" ? DEFAULT_WEIGHTS : w;
}
