// Which member a pooled request goes to: the one that can start it soonest, as this isolate last
// heard from each member's limiter. Pure: time and randomness come in as arguments.
import type { MemberView } from "../limiter/types";

/** What this isolate last heard of one member's limiter, and what it has sent there since. */
export interface Seen {
  view: MemberView;
  /** When it was heard (this isolate's clock). */
  at: number;
  /** Requests this isolate sent the member since: each one is ahead of the next. */
  sent: number;
}

export interface Candidate {
  seen: Seen | undefined;
}

/** A member nobody has heard of yet is assumed to serve this many a minute (so it gets tried). */
const UNKNOWN_PER_MIN = 600;

/** Until when the member is out, or 0. */
export function outUntil(s: Seen | undefined): number {
  return s?.view.outMs !== undefined ? s.at + s.view.outMs : 0;
}

/** How long one more request would wait at this member, by what was heard and sent since. */
export function predictedWait(s: Seen | undefined, now: number, fallbackPerMin: number): number {
  if (!s) return 0;
  const perMin = s.view.perMin ?? fallbackPerMin;
  const left = Math.max(0, s.at + s.view.waitMs - now);
  return left + (s.sent * 60_000) / Math.max(1e-3, perMin);
}

const weightOf = (c: Candidate, fallback: number) => c.seen?.view.perMin ?? fallback;

/**
 * Best of two: two members drawn at random in proportion to the rate each serves, and the one
 * that can start sooner wins (the first drawn on a tie). Drawing, not ranking, keeps isolates with
 * the same stale view from all piling onto the same member; weighting keeps a 900 RPM member
 * serving three times a 300 RPM one while both have room. Members out are skipped.
 * Returns the index chosen, or null when every member is out.
 */
export function choose(members: Candidate[], now: number, random: () => number): number | null {
  const open = members.map((_, i) => i).filter((i) => outUntil(members[i]!.seen) <= now);
  if (open.length === 0) return null;
  if (open.length === 1) return open[0]!;
  const known = open.map((i) => members[i]!.seen?.view.perMin).filter((r): r is number => r !== undefined);
  const fallback = known.length ? known.reduce((a, b) => a + b, 0) / known.length : UNKNOWN_PER_MIN;
  const a = draw(members, open, fallback, random, -1);
  const b = draw(members, open, fallback, random, a);
  const wa = predictedWait(members[a]!.seen, now, fallback);
  const wb = predictedWait(members[b]!.seen, now, fallback);
  return wb < wa ? b : a;
}

function draw(members: Candidate[], open: number[], fallback: number, random: () => number, not: number): number {
  const pool = open.filter((i) => i !== not);
  const total = pool.reduce((sum, i) => sum + weightOf(members[i]!, fallback), 0);
  let r = random() * total;
  for (const i of pool) {
    r -= weightOf(members[i]!, fallback);
    if (r < 0) return i;
  }
  return pool[pool.length - 1]!;
}

/** When the first member out comes back (this isolate's clock), or null if none is out. */
export function earliestReturn(members: Candidate[]): number | null {
  const times = members.map((m) => outUntil(m.seen)).filter((t) => t > 0);
  return times.length ? Math.min(...times) : null;
}
