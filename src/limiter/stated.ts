// A key's windows from a quota its operator states (providers/quota.ts), where the provider tells
// none: the window starts full at the stated size, so the key is paced from its first request, not
// from its first refusal. It stays a window learned from refusals (learned.ts): a refusal lowers it
// (another user of the account takes a share), a probe climbs back, never above the statement.
// A window the provider's headers tell is theirs, and left alone. Pure: time is passed in.
import type { StatedQuota } from "../providers/quota";
import { available, DEFAULT_WINDOW_MS, type QuotaState, type QuotaWindow } from "./quota";

/** The stated size in the window's own period (a refusal may have told another than a minute). */
export const statedCeiling = (w: QuotaWindow): number | null =>
  w.stated === undefined ? null : (w.stated * (w.periodMs ?? DEFAULT_WINDOW_MS)) / DEFAULT_WINDOW_MS;

/** Applies the operator's statement to `q`, as it stands now; true when a window changed. */
export function applyStated(q: QuotaState, s: StatedQuota | null, now: number): boolean {
  let changed = false;
  for (const kind of ["requests", "tokens", "output"] as const) {
    const n = s?.[kind];
    const w = q[kind];
    if (w?.stated === n || (w && w.source !== "refusals")) continue;
    changed = true;
    if (n === undefined) delete w!.stated;
    else if (!w) q[kind] = { limit: n, remaining: n, observedAt: now, readAt: now, refillPerMs: n / DEFAULT_WINDOW_MS, capacity: n, periodMs: DEFAULT_WINDOW_MS, source: "refusals", stated: n };
    else {
      // A new statement replaces what was learned under the old one, the level kept below it.
      const level = available(w, now);
      w.stated = n;
      w.limit = w.capacity = statedCeiling(w)!;
      w.refillPerMs = w.limit / (w.periodMs ?? DEFAULT_WINDOW_MS);
      w.remaining = Math.min(level, w.limit);
      w.observedAt = now;
    }
  }
  return changed;
}
