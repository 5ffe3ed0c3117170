// One virtual key's spend against its budget: reservations at admission, settlement with the true
// cost. Pure: the Budget object stores it and passes the time in.
import { type Period, periodStart } from "./period";

/**
 * A reservation its Worker never settled (the Worker died) is charged at its estimate after this:
 * spend is never forgotten, only known late. Longer than any request's deadline plus its stream.
 */
export const RESERVATION_TTL_MS = 30 * 60_000;
/** Reservations charged by expiry, remembered so a late settle corrects the charge instead of adding to it. */
const EXPIRED_KEPT = 1_000;

export interface Reservation {
  usd: number;
  at: number;
  /** How long it may stay unsettled, when not RESERVATION_TTL_MS (a provider batch's: its completion window and then some). */
  ttl?: number;
}

export interface Account {
  /** The start of the period `spend` is for. */
  period: number;
  spend: number;
  reservations: Record<string, Reservation>;
  /** Expired reservations charged at their estimate: id to [estimate, period]. */
  expired: Record<string, [number, number]>;
}

export const emptyAccount = (): Account => ({ period: 0, spend: 0, reservations: {}, expired: {} });

export type Verdict = { ok: true } | { ok: false; spend: number; reserved: number };

export const reservedUsd = (a: Account) => Object.values(a.reservations).reduce((s, r) => s + r.usd, 0);

/** A new period starts at zero; stale reservations are charged at their estimate. */
export function roll(a: Account, period: Period, now: number): void {
  const start = periodStart(period, now);
  if (start !== a.period) {
    a.period = start;
    a.spend = 0;
  }
  for (const [id, r] of Object.entries(a.reservations)) {
    if (now - r.at < (r.ttl ?? RESERVATION_TTL_MS)) continue;
    delete a.reservations[id];
    // Charged now, to this period, whichever it was made in: spend is never forgotten, only known late.
    a.spend += r.usd;
    a.expired[id] = [r.usd, a.period];
    const ids = Object.keys(a.expired);
    if (ids.length > EXPIRED_KEPT) delete a.expired[ids[0]!];
  }
}

/**
 * Admits a request when the key's spend, what requests in flight have reserved and its own
 * estimate fit in the budget, and reserves its estimate. So spend can pass the budget only by what
 * the requests in flight cost beyond their estimates. The same id twice is admitted once.
 */
export function reserve(a: Account, id: string, estimateUsd: number, budget: number, period: Period, now: number, ttl?: number): Verdict {
  roll(a, period, now);
  if (a.reservations[id]) return { ok: true };
  const reserved = reservedUsd(a);
  const usd = Math.max(0, estimateUsd);
  if (a.spend + reserved >= budget || a.spend + reserved + usd > budget) return { ok: false, spend: a.spend, reserved };
  a.reservations[id] = ttl ? { usd, at: now, ttl } : { usd, at: now };
  return { ok: true };
}

/**
 * The true cost replaces the reservation; a repeated or unknown settle changes nothing. A cost
 * known only after its period ended (a stream that ran past midnight) is charged to the period it
 * became known in: the money was spent, and the old period's spend is no longer kept.
 */
export function settle(a: Account, id: string, costUsd: number, period: Period, now: number): void {
  roll(a, period, now);
  const cost = Math.max(0, costUsd);
  const r = a.reservations[id];
  if (r) {
    delete a.reservations[id];
    a.spend += cost;
    return;
  }
  const e = a.expired[id];
  if (!e) return;
  delete a.expired[id];
  // Charged at its estimate when it expired: now the difference, if that charge is still in this period.
  if (e[1] === a.period) a.spend = Math.max(0, a.spend + cost - e[0]);
}
