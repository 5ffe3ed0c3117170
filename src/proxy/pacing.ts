import type { Pacing } from "../limiter/types";

/**
 * The hints a caller's own scheduler can size itself by: `x-slotgate-limit`, the key's concurrency
 * limit, and `x-slotgate-rate`, the requests per minute a known quota paces it at. From the
 * limiter's latest answer; an answer the limiter never saw (it could not be reached) has none.
 */
export function stampPacing(res: Response, p: Partial<Pacing> | undefined): void {
  if (p?.limit !== undefined) res.headers.set("x-slotgate-limit", String(p.limit));
  if (p?.ratePerMin !== undefined) res.headers.set("x-slotgate-rate", String(p.ratePerMin));
}
