// Whether a pool member's key is in or out of its pool. A key that answers with hard quota, 401 or
// 403 is out for a growing time; then one real request (the probe) tries it, the rest stay away.
// Only pooled requests see this: a caller with its own key gets the provider's answer as before.

/** Why a member was taken out: the provider's error code, else its status. */
export type OutReason = string;

export interface OutState {
  /** Epoch ms on the limiter's clock when a probe may go; 0: in. */
  until: number;
  reason: OutReason | null;
  /** Outs in a row without a good answer between: the backoff doubles with each. */
  strikes: number;
  /** The lease id of the one request trying the key again, if one is out there. */
  probe: string | null;
}

/** The longest a member stays out before it is tried again. */
export const OUT_MAX_MS = 15 * 60_000;
/** What a refused pooled request is told while another request probes the member. */
export const PROBE_WAIT_MS = 1_000;

export const inState = (): OutState => ({ until: 0, reason: null, strikes: 0, probe: null });

/** Out or probing: not a member to send ordinary traffic to. */
export const isOut = (s: OutState): boolean => s.reason !== null;

/** How long the next out lasts: `firstMs`, doubled per strike, capped. */
export function outFor(strikes: number, firstMs: number): number {
  return Math.min(OUT_MAX_MS, firstMs * 2 ** Math.max(0, strikes - 1));
}

/**
 * A pooled request asks to be queued. While out: refused, with how long until the member may be
 * tried. Once the time is up, the first to ask is let through as the probe; the others wait for it.
 */
export function admitPooled(s: OutState, id: string, now: number): { go: true } | { go: false; retryAfterMs: number } {
  if (!isOut(s)) return { go: true };
  if (now < s.until) return { go: false, retryAfterMs: s.until - now };
  if (s.probe === null || s.probe === id) {
    s.probe = id;
    return { go: true };
  }
  return { go: false, retryAfterMs: PROBE_WAIT_MS };
}

/**
 * An answer to lease `id`. `out` names the reason when it says the key cannot be used (hard quota,
 * a refused key). While the member is out only the probe's answer counts: anything else the
 * provider says to it shows the key works again; answers to requests sent before the out change
 * nothing. `confirmOnly`: the evidence may keep a member out (its probe failed) but not take one
 * in the pool out. Returns whether the member's state changed.
 */
export function noteAnswer(s: OutState, id: string, out: OutReason | undefined, now: number, firstMs: number, confirmOnly = false): boolean {
  if (isOut(s) && s.probe !== id) return false;
  if (out !== undefined && confirmOnly && !isOut(s)) return false;
  if (out === undefined) {
    if (!isOut(s)) return false;
    Object.assign(s, inState());
    return true;
  }
  s.strikes++;
  s.until = now + outFor(s.strikes, firstMs);
  s.reason = out;
  s.probe = null;
  return true;
}

/** The probe's request went away without an answer: the next one to ask probes instead. */
export function dropProbe(s: OutState, id: string): void {
  if (s.probe === id) s.probe = null;
}
