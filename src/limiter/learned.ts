/**
 * @module A window its provider never tells (Gemini, xAI, DeepSeek: no limit headers), learned from
 * its refusals. A 429 says the window was full when it refused: what this limiter granted in the
 * period before that grant is what the provider let through, so it is the limit (or, told in the
 * body, Gemini's `quotaValue` is). From then on the key is paced at limit per period, and probes a
 * little above it while the pace binds, so a limit that grew is found again. Pure: time is passed in.
 */
import type { RefusedLimit } from "../policy/types";
import { available, DEFAULT_WINDOW_MS, type Granted, type QuotaState, type QuotaWindow } from "./quota";
import { statedCeiling } from "./stated";

/** Refused grant numbers remembered, so a later count does not take them for ones the provider let through. */
const REFUSED_KEPT = 256;
/** A refusal that counts fewer than this share of the learned limit lowers it to this share, no further at once (a short log after a restart). */
const MOST_CUT = 0.7;
/** Each success while the pace binds raises the limit by this over the limit: about one unit every 1/PROBE periods at full use. */
const PROBE = 0.25;
/** The pace binds when less than this share of the window is left. */
const BINDS = 0.1;

/** The refused grant: its number (`mark.requests`) and when it was granted. */
export interface RefusedGrant {
  mark?: Granted;
  grantedAt?: number;
  cost: number;
  /** Its output allowance, where it named one. */
  out?: number;
}

/** What a grant drew from a window of `kind`. */
const unitsOf = (kind: RefusedLimit["kind"], e: { cost: number; out?: number }): number => (kind === "requests" ? 1 : kind === "tokens" ? e.cost : (e.out ?? 0));

/**
 * A 429 on a key whose provider told no window of `refused.kind`: the window it hit, set (or
 * corrected) from what was let through before it, and left empty as the provider found it.
 * A window the headers tell is theirs, and left alone.
 */
export function learnFromRefusal(q: QuotaState, refused: RefusedLimit, g: RefusedGrant, now: number): void {
  const { periodMs } = refused;
  // A refusal of generated tokens on a request that named no output allowance cannot be counted in them: its requests are.
  const kind = refused.kind === "output" && !(g.out! > 0) ? "requests" : refused.kind;
  const prev = q[kind];
  if (prev && prev.source !== "refusals") return;
  const n = g.mark?.requests;
  if (n !== undefined) {
    q.refusedN = [...(q.refusedN ?? []), n].slice(-REFUSED_KEPT);
  }
  if (prev?.learned && n !== undefined && g.grantedAt !== undefined && g.grantedAt <= prev.learned.at) {
    straggler(prev, n, unitsOf(kind, g), now);
    return;
  }
  let limit = refused.limit;
  if (limit === null) {
    const since = (g.grantedAt ?? now) - periodMs;
    const refusedN = new Set(q.refusedN ?? []);
    let counted = 0;
    for (const e of q.recent ?? []) if ((n === undefined || e.n < n) && e.at > since && !refusedN.has(e.n)) counted += unitsOf(kind, e);
    // Nothing let through in the period, as far as this log knows (a restart, a first request): no estimate; the hint alone holds the key.
    if (counted === 0 && prev?.limit == null) return;
    // A refusal says the limit is at most what was let through: it lowers a learned limit, never
    // raises it (a period that still holds the first episode's burst counts more than the refill).
    limit = prev?.limit != null ? Math.min(prev.limit, Math.max(counted, Math.ceil(prev.limit * MOST_CUT))) : counted;
    // A refused request never counts itself; a token window holds at least the refused request.
    limit = Math.max(limit, unitsOf(kind, g));
  }
  // A stated quota is the most there is; a refusal under it is another user's share.
  if (prev?.stated !== undefined) limit = Math.min(limit, statedCeiling({ ...prev, periodMs })!);
  limit = Math.max(limit, 1);
  // Empty when refused; what was granted after it is owed on top.
  const after = n === undefined ? 0 : kind === "requests" ? q.granted.requests - n : (q.recent ?? []).filter((e) => e.n > n).reduce((s, e) => s + unitsOf(kind, e), 0);
  const window: QuotaWindow = {
    limit, remaining: Math.max(-limit, -after), observedAt: now, refillPerMs: limit / periodMs, capacity: limit, periodMs, source: "refusals", readAt: now,
    ...(prev?.stated !== undefined && { stated: prev.stated }), ...(n !== undefined && { learned: { at: now, n } }),
  };
  q[kind] = window;
}

/**
 * A refusal of grant `n`, made before the window was learned from the refusal that opened its
 * burst: it was in flight then, and says nothing that one did not. Sends reorder on their way (a
 * burst's refused requests are seldom its last grants), so counting again from it would count only
 * the grants numbered before it, and lower the limit by those let through after it. The limit
 * stands. Numbered after the refusal that set the window, it was owed in the level; refused, it
 * drew nothing, and that comes back.
 */
function straggler(w: QuotaWindow, n: number, units: number, now: number): void {
  if (n <= w.learned!.n) return;
  const top = w.capacity ?? w.limit;
  const level = available(w, now) + units;
  w.remaining = top === null ? level : Math.min(top, level);
  w.observedAt = now;
}

/**
 * A success of `cost` tokens (and `out` of output allowance) on a key paced from its refusals: while
 * a window's pace binds, its limit creeps up (a request's worth every 1/PROBE periods at full use)
 * to find a limit that grew.
 */
export function probe(q: QuotaState, cost: number, now: number, out = 0): void {
  for (const [w, units] of [[q.requests, 1], [q.tokens, cost], [q.output, out]] as const) {
    if (!w || w.source !== "refusals" || w.limit === null || units <= 0) continue;
    if (available(w, now) >= w.limit * BINDS) continue;
    const ceiling = statedCeiling(w) ?? Number.POSITIVE_INFINITY;
    if (w.limit >= ceiling) continue;
    w.remaining = available(w, now);
    w.observedAt = now;
    w.limit = Math.min(ceiling, w.limit + (PROBE * units * units) / w.limit);
    w.capacity = w.limit;
    w.refillPerMs = w.limit / (w.periodMs ?? DEFAULT_WINDOW_MS);
  }
}
