// Who goes, and when: a key's waiters stand in fair lines (queue.ts) and go as the send gate, the
// quota windows, the claims of refused retries (claims.ts) and the limit in force allow. The head
// the queue chooses holds the line when it does not fit its quota, so large requests never starve.
// LimiterCore calls these with itself. Pure: time is passed in.
import { fitPace, noteInFlight, paceCeiling } from "./aimd";
import type { Claims } from "./claims";
import { isLane } from "./lanes";
import { admitPooled, dropProbe, type OutState } from "./membership";
import { noteCost, paceDueAt, paceNeed } from "./pace";
import { charge, fitsAt, tight } from "./quota";
import type { Waiter, WaitQueue } from "./queue";
import type { Ramp } from "./ramp";
import type { Admission } from "./state";
import { lapse, type Ticketed } from "./tickets/effects";
import { SEND_JITTER_MS } from "./timing";
import { neverFits, type TooLarge } from "./too-large";

/** The parts of a key's state admission reads and moves (LimiterCore's). */
export interface Admitting extends Ticketed {
  readonly queue: WaitQueue<Waiter>;
  readonly claims: Claims;
  readonly ramp: Ramp;
  member: OutState;
  cooldownUntil: number;
  /** Slots the provider is busy with, and requests out (LimiterCore's). */
  readonly busy: number;
  readonly inFlight: number;
  learning(now?: number): boolean;
  limitAt(now: number): number;
  retryAfter(cost: number, now: number, who?: Pick<Waiter, "caller" | "lane" | "out">): number;
  cancel(id: string): Waiter | undefined;
  retake(): void;
}

/** What a pump did: who went, who waited past their deadline, who left a pool that went out, who can never fit. */
export interface Pumped {
  granted: Waiter[];
  expired: Waiter[];
  ousted: Waiter[];
  tooLarge: [Waiter, TooLarge][];
}

/**
 * Earliest time a waiter of `cost` may be sent, as far as the send gate and quotas know.
 * `granting`: what the tickets out reserve comes first (they are already granted); an estimate
 * for a caller leaves them out, since they come back or lapse within TICKET_LAPSE_MS.
 */
export function openAt(k: Admitting, cost: number, now: number, requests = 1, behind = false, granting = false, out = 0): number {
  const r = granting ? k.tickets.reserved : { requests: 0, tokens: 0, output: 0 };
  return Math.max(k.cooldownUntil, fitsAt(k.quota, cost + r.tokens, now, requests + r.requests, behind || r.requests > 0, SEND_JITTER_MS, out + r.output));
}

/**
 * Queues a waiter in its caller's line (past the cap on callers, the overflow caller's), unless
 * the gate or a quota will stay shut past its deadline.
 */
export function enqueue(k: Admitting, w: Waiter, now: number): Admission {
  const tooLarge = neverFits(k.quota, w.cost, now);
  if (tooLarge) return { kind: "rejected", retryAfterMs: 0, tooLarge };
  if (w.pooled) {
    const may = admitPooled(k.member, w.id, now);
    if (!may.go) return { kind: "rejected", retryAfterMs: may.retryAfterMs, out: true };
  }
  const open = openAt(k, w.cost, now, 1, false, false, w.out);
  if (open > w.deadline) return { kind: "rejected", retryAfterMs: k.retryAfter(w.cost, now, w) };
  w.lane = isLane(w.lane) ? w.lane : "normal";
  let queued: Map<string, number> | undefined;
  w.caller = k.callers.admit(w.caller, w.lane, now, (c) => (queued ??= k.queue.queuedBy()).has(c));
  k.queue.push(w);
  return { kind: "queued" };
}

/**
 * Grants, in the queue's fair order, every waiter that may go now, and expires the ones past
 * their deadline (or whose deadline the send gate outlasts). `ousting`: the member has just gone
 * out of its pool, and its pooled waiters go to the other members.
 */
export function pump(k: Admitting, now: number, ousting: boolean): Pumped {
  lapse(k, now);
  const ousted = ousting ? [...k.queue].filter((w) => w.pooled && w.id !== k.member.probe) : [];
  for (const w of ousted) k.cancel(w.id);
  // A waiter whose deadline falls before the send gate opens can never go: it hears so now,
  // with the gate's retry-after, rather than at its deadline.
  const hopeless = k.cooldownUntil > now ? k.cooldownUntil - 1 : now;
  const expired = k.queue.takeExpired(hopeless);
  for (const w of expired) {
    k.claims.drop(w.id);
    dropProbe(k.member, w.id);
  }
  k.claims.expire(now);
  const granted: Waiter[] = [];
  const go = (w: Waiter) => {
    grant(k, w, now);
    granted.push(w);
  };
  // A head that a limit told since it queued says can never fit is turned away, not waited for.
  const tooLarge: [Waiter, TooLarge][] = [];
  const turnAway = (w: Waiter) => {
    const why = neverFits(k.quota, w.cost, now);
    if (why) tooLarge.push([k.cancel(w.id)!, why]);
    return why !== null;
  };
  // Retries holding a claim go first, each when the refill it claimed is there. They are taken
  // out of fair order: the fair share charged their first attempt already.
  for (const c of k.claims.inOrder()) {
    const w = k.queue.has(c.id) ? k.queue.peekId(c.id) : undefined;
    if (!w || turnAway(w)) continue;
    if (openAt(k, c.tokens, now, c.requests, false, true, c.output) > now) break;
    if (k.busy >= k.limitAt(now) && !paced(k, now)) break;
    k.queue.remove(c.id);
    k.claims.drop(c.id);
    go(w);
  }
  for (let head = k.queue.peek(); head; head = k.queue.peek()) {
    if (!k.claims.has(head.id) && turnAway(head)) continue;
    if (k.claims.has(head.id) || headOpenAt(k, head, now) > now) break;
    if (k.busy >= k.limitAt(now) && !paced(k, now)) break;
    k.queue.shift();
    go(head);
  }
  // Someone waits: under contention every request goes through the queue, so the tickets out
  // are taken back (an isolate that hears of it gives its own back; the rest come back or lapse).
  if (k.queue.size > 0) k.retake();
  return { granted, expired, ousted, tooLarge };
}

/** When the next pump could change something: gate or quota opening, or a deadline. */
export function wakeAt(k: Admitting, now: number): number | null {
  const head = k.queue.peek();
  // Every head may be held by its caller's cap: a release will pump, but deadlines still run.
  if (!head) return k.queue.earliestDeadline();
  let at = Math.min(k.queue.earliestDeadline() ?? Infinity, k.claims.earliestEnd() ?? Infinity);
  // A lapse turns a ticket's reservation into a charge, which refills.
  at = Math.min(at, k.tickets.nextLapse() ?? Infinity);
  const limit = k.limitAt(now);
  let step: number | null;
  if (k.busy < limit) at = Math.min(at, headOpenAt(k, head, now), claimOpenAt(k, now));
  // A new key's limit rises by itself: look again at its next step.
  else if ((step = k.ramp.nextStep(now, k.learning(now), limit, k.config.maxConcurrency, k.aimd.limit)) !== null) at = Math.min(at, step);
  // Before the first answer the pace is sized from how long the oldest slot has been held, a
  // bound that grows with time: look again when it will have grown past the limit.
  else if (tightNow(k, now)) {
    const oldest = k.leases.oldestGrantAt();
    const due = oldest === null ? null : paceDueAt(k.pace, k.quota, oldest, limit);
    const canRise = k.aimd.limit < paceCeiling(k.aimd, k.config);
    if (due !== null && due > now && canRise) at = Math.min(at, Math.max(due, openAt(k, head.cost, now, 1, false, false, head.out)));
  }
  return Number.isFinite(at) ? Math.max(at, now) : null;
}

/** When a head may go: after the gate, and after what every open claim needs. */
function headOpenAt(k: Admitting, head: Pick<Waiter, "cost" | "out">, now: number): number {
  const out = head.out ?? 0;
  if (k.claims.size === 0) return openAt(k, head.cost, now, 1, false, true, out);
  const held = k.claims.total();
  return openAt(k, head.cost + held.tokens, now, held.requests + 1, true, true, out + held.output);
}

/** When the first claim whose retry is already queued may go. */
function claimOpenAt(k: Admitting, now: number): number {
  for (const c of k.claims.inOrder()) if (k.queue.has(c.id)) return openAt(k, c.tokens, now, c.requests, false, true, c.output);
  return Infinity;
}

/**
 * The limit, not the quota, holds back a head the quota would admit. If the quota is what binds
 * this key (a window cannot pay for the whole line), the limit must not: raise it to the pace.
 * Where the windows have plenty, it stays slow start's job to find a concurrency cap.
 */
function paced(k: Admitting, now: number): boolean {
  if (k.learning(now) || !tightNow(k, now)) return false;
  const oldest = k.leases.oldestGrantAt();
  const need = paceNeed(k.pace, k.quota, oldest === null ? 0 : now - oldest);
  if (need === null) return false;
  fitPace(k.aimd, k.config, need, now, k.inFlight);
  return k.busy < k.limitAt(now);
}

/** A window cannot pay for the whole line now: the quota, not concurrency, binds this key. */
function tightNow(k: Admitting, now: number): boolean {
  const waiting = k.queue.size;
  return tight(k.quota, waiting, waiting * (k.pace.cost ?? 1), now, waiting * (k.pace.out ?? 0));
}

function grant(k: Admitting, w: Waiter, now: number): void {
  const lease = k.leases.grant(w.id, w.cost, now, k.config.leaseTtlMs, w.caller, w.out);
  if (w.caller !== undefined) k.callers.granted(w.caller, w.cost, now);
  k.ramp.sent(now);
  charge(k.quota, w.cost, now, w.out);
  noteCost(k.pace, w.cost, w.out);
  lease.mark = { ...k.quota.granted };
  noteInFlight(k.aimd, k.inFlight);
}
