// What the provider's answers teach a key: each attempt's outcome goes to AIMD, the quota model,
// the pace, the shared gate, the claims and the metrics. Pure: time is passed in.
import type { LimiterConfig } from "../config/limits";
import { type AimdState, type HistoryEntry, onConcurrencyLimit, onSuccess, onTransient, stormy } from "./aimd";
import type { Claims } from "./claims";
import type { Leases } from "./leases";
import { noteAnswer, type OutState } from "./membership";
import { type Metrics, record } from "./metrics";
import { noteHold, type PaceState } from "./pace";
import { learnFromRefusal, probe } from "./learned";
import { type QuotaState, room } from "./quota";
import { observe, roomInReading } from "./quota-reading";
import type { Lease, Outcome } from "./state";
import { CLAIM_GRACE_MS, readingDate } from "./timing";
import type { SettleAnswer } from "./types";

/** A 429 with no hint still holds everyone back briefly, so the burst behind it does not follow. */
export const NO_HINT_GATE_MS = 1_000;
/** Lease ids remembered as settled: a repeated settle (a Worker's retry of the call) changes nothing. */
const SETTLED_MEMORY = 2_048;

/** The parts of a key's state an outcome changes (LimiterCore's). */
export interface Learner {
  readonly config: LimiterConfig;
  readonly leases: Leases;
  readonly claims: Claims;
  aimd: AimdState;
  quota: QuotaState;
  pace: PaceState;
  metrics: Metrics;
  member: OutState;
  cooldownUntil: number;
}

export interface Settled {
  /** The limit change it caused, if any. */
  changed: HistoryEntry | null;
  /** A pooled answer moved the member in or out of its pool. */
  memberMoved: boolean;
}

/** Applies outcomes once per lease id. */
export class Outcomes {
  #settled = new Set<string>();

  settle(k: Learner, id: string, o: Outcome, now: number): Settled {
    if (this.#settled.has(id)) return { changed: null, memberMoved: false };
    this.#settled.add(id);
    if (this.#settled.size > SETTLED_MEMORY) this.#settled.delete(this.#settled.values().next().value as string);

    record(k.metrics, o);
    const memberMoved = o.pooled === true && noteAnswer(k.member, id, o.out, now, o.outMs ?? 0, o.confirmOnly);
    const lease = k.leases.get(id);
    // The provider counted at admission, after the Worker's send (timing.ts).
    const readAt = readingDate(o, lease?.grantedAt, now);
    const took = o.cls === "success" && lease ? { requests: 1, tokens: lease.cost, output: lease.out ?? 0 } : undefined;
    observe(k.quota, o.info, now, lease?.mark, readAt, took);
    let changed: HistoryEntry | null = null;
    if (o.cls === "success") {
      if (lease) lease.ok = true;
      if (lease && !o.streaming) k.leases.done(lease);
      noteHold(k.pace, o.latencyMs, true);
      probe(k.quota, lease?.cost ?? 0, now, lease?.out ?? 0);
      if (o.attempt <= 1) changed = onSuccess(k.aimd, k.config, now, k.leases.active);
    } else if (o.cls === "transient") onTransient(k.aimd);
    // A capacity refusal (a full provider or tier) says nothing of this key's limit: neutral to
    // AIMD, no gate; its retry backs off on its own (retryWord).
    else if (o.cls === "rate_limit") {
      changed = refused(k, o, lease, now);
      if (!o.final && o.next) k.claims.add(o.next, { cost: lease?.cost ?? 1, ...(lease?.out && { out: lease.out }), until: now + (o.info.retryAfterMs ?? NO_HINT_GATE_MS) + CLAIM_GRACE_MS });
    }
    return { changed, memberMoved };
  }
}

/**
 * A 429. With a window that cannot pay, the quota model was behind: every caller waits for the
 * hint, and concurrency stays (quotas pace, they do not cut). With room in every window it is
 * about concurrency: cut, and only the refused request waits, unless the cut was not enough.
 * With no quota information at all it could be either: cut and hold everyone. A provider that
 * tells no window has one learned from the refusal (learned.ts): empty, so it holds and paces.
 */
function refused(k: Learner, o: Outcome, lease: Lease | undefined, now: number): HistoryEntry | null {
  const hold = () => (k.cooldownUntil = Math.max(k.cooldownUntil, now + (o.info.retryAfterMs ?? NO_HINT_GATE_MS)));
  const cost = lease?.cost ?? 1;
  // No window told: the refusal teaches the one it hit (a provider without limit headers).
  if (o.info.refused) learnFromRefusal(k.quota, o.info.refused, { mark: lease?.mark, grantedAt: lease?.grantedAt, cost, out: lease?.out }, now);
  const seen = roomInReading(o.info, cost, lease?.out) ?? room(k.quota, cost, now, lease?.out);
  if (seen === "empty") {
    k.aimd.phase = "steady";
    hold();
    return null;
  }
  const refusal = { inFlightAtGrant: lease?.inFlight ?? null, grantSeq: lease?.seq ?? null, seqNow: k.leases.seq };
  const { entry, holdAll } = onConcurrencyLimit(k.aimd, k.config, now, k.leases.active, refusal);
  if (holdAll || seen === "unknown") hold();
  return entry;
}

const NOW: SettleAnswer = { retry: "now" };
const WAIT: SettleAnswer = { retry: "wait" };

/**
 * When the retry of a settled attempt may come back, as the key sees it once the outcome is in. A
 * fault on one attempt says nothing about the next slot: outside a storm its retry takes the next
 * free slot, not a backoff sized for its own bad luck. A refusal for concurrency concerns the
 * refused request alone: while the key's gate is open, its retry takes the next slot under the new
 * limit (its claim puts it first) rather than waiting out the provider's hint. Anything that shut
 * the gate (an empty window, a repeat, no quota information) waits as before.
 */
export function retryWord(k: Pick<Learner, "aimd" | "cooldownUntil">, o: Outcome, now: number): SettleAnswer {
  if (o.final) return WAIT;
  if (o.cls === "transient") return stormy(k.aimd) ? WAIT : NOW;
  if (o.cls === "rate_limit") return k.cooldownUntil > now ? WAIT : NOW;
  // capacity: the provider is full, whatever this key's gate says; the Worker's backoff (or hint) decides.
  return WAIT;
}
