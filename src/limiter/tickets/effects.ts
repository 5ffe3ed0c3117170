// What tickets do to a key's state (policy.ts decides when and how many; book.ts keeps the ones
// out): issued as leases that hold their slots and reserve their cost in the windows, charged to
// the windows when a request uses one or it lapses (or its settle or a renewal comes first),
// released when it comes back, restored after a restart, and taken back together when the key
// learns it has less than it thought. LimiterCore hands its ticket work here. Pure: time is passed in.
import type { LimiterConfig } from "../../config/limits";
import { type AimdState, noteInFlight } from "../aimd";
import type { CallerBook } from "../callers";
import type { Lane } from "../lanes";
import type { Leases } from "../leases";
import { noteCost, type PaceState } from "../pace";
import { available, charge, type QuotaState } from "../quota";
import { type Ask, fellBelow, type KeyRoom, TICKET_LAPSE_MS, TICKET_SHARE, ticketsFor } from "./policy";
import { isTicket, type TicketBook } from "./book";

/** The parts of a key's state tickets touch (LimiterCore's). */
export interface Ticketed {
  readonly config: LimiterConfig;
  readonly leases: Leases;
  readonly tickets: TicketBook;
  readonly callers: CallerBook;
  aimd: AimdState;
  quota: QuotaState;
  pace: PaceState;
  /** The key's ticket epoch now (epoch.ts). */
  readonly epoch: number;
}

/** What each window holds now (null: no window known). */
export type Windows = Pick<KeyRoom, "requests" | "tokens" | "output">;

/** What each window holds now, for ticketsFor. */
export function windows(k: Pick<Ticketed, "quota">, now: number): Windows {
  const { requests, tokens, output } = k.quota;
  return { requests: requests && available(requests, now), tokens: tokens && available(tokens, now), ...(output && { output: available(output, now) }) };
}

/**
 * Issues what ticketsFor allows: each a lease of `ask.cost` at the key's epoch that expires (unless
 * a request uses it and renews it) a lease's time after its lapse, so one used at the last moment
 * outlives its first renewal. Returns the ids.
 */
export function issue(k: Ticketed, room: Omit<KeyRoom, "requests" | "tokens" | "output" | "reserved" | "busy" | "idle">, ask: Ask, now: number): string[] {
  const n = ticketsFor({ ...room, ...windows(k, now), reserved: k.tickets.reserved, busy: k.leases.busy + k.tickets.unseenSlots, idle: k.leases.idle + k.tickets.unseenSlots }, ask);
  const ids: string[] = [];
  const out = Number.isFinite(ask.out) && ask.out! > 0 ? ask.out : undefined;
  for (let i = 0; i < n; i++) ids.push(k.tickets.issue(ask.cost, now, now + TICKET_LAPSE_MS + k.config.leaseTtlMs, k.epoch, out));
  return ids;
}

/** An output allowance as a use or an ask says it: a count, or nothing. */
const outOf = (out: number | undefined) => (out !== undefined && Number.isFinite(out) && out >= 0 ? out : undefined);

/** How a ticket is reached: a request's use (who sent it), or its lapse (when it came); else its settle or a renewal came first. */
export interface Reached {
  who?: { caller?: string; lane?: Lane };
  lapsedAt?: number;
}

/**
 * A request went upstream on ticket `id` (or the ticket lapsed, or its settle or renewal came
 * first): its cost is charged to the windows now, never earlier than the provider saw it, and its
 * lease is numbered and dated as a grant's. A ticket already used or lapsed changes nothing (its
 * use can arrive after the request's settle, which uses it first), nor does one given back or
 * released (a use said again). Returns whether the key held it as a ticket of its current epoch:
 * false for one of an older epoch (the key took it back, and the isolate had not heard yet, or
 * should have given it back) and for one this life never held, each of which is still a request
 * out: held and charged as a grant made now, never twice.
 */
export function use(k: Ticketed, id: string, cost: number, now: number, how: Reached = {}, out?: number): boolean {
  let lease = k.leases.get(id);
  let held = lease !== undefined;
  if (!lease && isTicket(id) && !k.tickets.ended(id)) {
    // A ticket of the last life, handed out too late to be written: one of the slots held back for
    // them; with none left, a request's use is a request out all the same.
    if (k.tickets.takeUnseen(cost)) held = true;
    if (held || how.who) lease = k.leases.ticket(id, Number.isFinite(cost) && cost >= 0 ? cost : 0, now + k.config.leaseTtlMs, now, outOf(out));
  }
  if (lease?.ticket === undefined) return lease !== undefined;
  const current = held && (lease.epoch === undefined || lease.epoch === k.epoch);
  const spent = Number.isFinite(cost) && cost >= 0 ? Math.min(cost, lease.cost) : lease.cost;
  // A use that names its output allowance is charged it (never above what the ticket reserved); else the ticket's.
  const said = outOf(out);
  const spentOut = said !== undefined && lease.out !== undefined ? Math.min(said, lease.out) : (lease.out ?? said ?? 0);
  charge(k.quota, spent, now, spentOut);
  const caller = how.who && k.callers.admit(how.who.caller, how.who.lane ?? "normal", now, () => false);
  k.leases.use(id, how.lapsedAt ?? now, k.config.leaseTtlMs, caller, how.lapsedAt === undefined);
  if (caller !== undefined) k.callers.granted(caller, spent, now);
  noteCost(k.pace, spent, spentOut);
  lease.mark = { ...k.quota.granted };
  noteInFlight(k.aimd, k.leases.active);
  return current;
}

/**
 * Tickets nothing was heard of in TICKET_LAPSE_MS are counted as used: charged now, their slots
 * held as if a request had gone at the lapse, until their lease ends (a lease's time after the
 * lapse for a ticket issued in this life; the restore grace for one restored), or their release.
 */
export function lapse(k: Ticketed, now: number): void {
  for (const [id, at] of k.tickets.due(now)) use(k, id, Number.NaN, now, { lapsedAt: at });
}

/**
 * After a restart that came while up to `slots` tickets may have been out: until the last of them
 * has lapsed, what they could hold at most is held back (those slots, and the tickets' share of the
 * tokens window), so a use of one this life never saw finds its slot and its cost set aside.
 */
export function holdBack(k: Ticketed, now: number, slots: number): void {
  const tokens = windows(k, now).tokens;
  if (slots > 0) k.tickets.holdBack(slots, tokens === null ? 0 : Math.max(0, tokens * TICKET_SHARE), now + TICKET_LAPSE_MS);
}

/**
 * An outcome of lease `id` is about to go in: a request went upstream on it, on a ticket whose use
 * has not arrived yet too (it is used now). Returns what the windows held before, for `takesBack`.
 */
export function settling(k: Ticketed, id: string, now: number): Windows {
  if (k.leases.get(id)?.ticket !== undefined) use(k, id, Number.NaN, now);
  return windows(k, now);
}

/**
 * After an outcome went in: whether every ticket out is taken back. `refused`: a 429, or a pool
 * member that moved; else a reading below what the model held before (`was`) by a request's worth.
 */
export function takesBack(k: Ticketed, was: Windows, refused: boolean, now: number): boolean {
  const is = windows(k, now);
  return refused || fellBelow(was.requests, is.requests, 1) || fellBelow(was.tokens, is.tokens, k.pace.cost ?? 1) ||
    fellBelow(was.output ?? null, is.output ?? null, k.pace.out ?? 1);
}

/**
 * A renewal of `id`: only a request out renews, so on a ticket whose use has not arrived (or one
 * this life never saw, after a restart) it is used now, of `cost` if the renewal says.
 */
export function renewing(k: Ticketed, id: string, now: number, cost?: number): void {
  const lease = k.leases.get(id);
  if (lease ? lease.ticket !== undefined : isTicket(id)) use(k, id, cost ?? Number.NaN, now);
}

/**
 * A lease held before a restart. A ticket its row says was not used is restored as a ticket, its
 * lapse counted from now: an isolate may still use it, and its use (or lapse) is its one charge. A
 * used one is a request out, charged already (its row and the windows are written together): held
 * as a lease.
 */
export function restore(k: Ticketed, id: string, cost: number, expiresAt: number, now: number, unused: boolean): void {
  if (isTicket(id) && unused) k.leases.ticket(id, cost, expiresAt, now + TICKET_LAPSE_MS);
  else k.leases.hold(id, cost, expiresAt);
}
