import type { LimiterConfig, LimiterOverride } from "../config/limits";
import * as admission from "./admission";
import { comeBackAfter, memberView, pacingOf } from "./advice";
import { type AimdState, type HistoryEntry, rebound, setManual, startFrom } from "./aimd";
import { CallerBook, DEFAULT_CALLER } from "./callers";
import { Claims } from "./claims";
import { DEFAULT_WEIGHTS, type Lane, type LaneWeights } from "./lanes";
import { Leases } from "./leases";
import { dropProbe, isOut, type OutState, PROBE_WAIT_MS } from "./membership";
import { meanLatencyMs, type Metrics } from "./metrics";
import { Outcomes, retryWord } from "./outcomes";
import { noteHold, type PaceState } from "./pace";
import { paceRate, type QuotaState } from "./quota";
import { type Waiter, WaitQueue } from "./queue";
import { Ramp } from "./ramp";
import { type Learned, learnedFrom, persistedOf, Settings } from "./settings";
import type { Admission, Lease, Outcome, Persisted } from "./state";
import { TierOutlooks } from "./tier-outlooks";
import { isTicket, TicketBook } from "./tickets/book";
import * as tickets from "./tickets/effects";
import type { Ask } from "./tickets/policy";
import { opening } from "./timing";
import type { MemberView, Pacing, SettleAnswer } from "./types";

export type { Admission, Lease, Outcome, Persisted } from "./state";
export { NO_HINT_GATE_MS } from "./outcomes";
export { ADMISSION_LAG_MS, CLAIM_GRACE_MS, LEARN_MS, LEARN_STEP_MS, renewEvery, SEND_JITTER_MS } from "./timing";

/**
 * The whole limiter as a pure state machine: the Durable Object (and the batch runner, in-process)
 * feed it calls and the time, and act on what it returns. It never reads a clock or does I/O.
 * This holds a key's state and takes its calls; what each call decides is in the module named for
 * it: who goes, and when, is admission.ts; the slots are Leases (leases.ts); what answers teach is
 * outcomes.ts; a new key's limit is ramp.ts; tickets are tickets/ (effects.ts); the operator's
 * settings and what survives a restart are settings.ts.
 */
export class LimiterCore implements Learned {
  /** Waiters, in fair shares between callers and lanes (queue.ts). */
  readonly queue: WaitQueue<Waiter>;
  /** Who has been asking, for the admin view and the cap on callers. */
  readonly callers = new CallerBook();
  /** The slots held (leases.ts). */
  readonly leases = new Leases();
  /** Refused requests' claims on the refill they wait for (claims.ts). */
  readonly claims = new Claims();
  /** Tickets out (tickets/): slots and quota granted to isolates ahead of their requests. */
  readonly tickets: TicketBook;
  /** The key's outlook of each service tier it is asked at (tier-outlooks.ts). */
  readonly tiers = new TierOutlooks();
  /** Changes whenever the tickets out are taken back: an isolate uses none of an older epoch (tickets/epoch.ts). */
  epoch: number;
  aimd!: AimdState;
  quota!: QuotaState;
  cooldownUntil!: number;
  metrics!: Metrics;
  pace!: PaceState;
  /** In or out of a pool, for pooled requests (membership.ts). */
  member!: OutState;
  #settings: Settings;
  #outcomes = new Outcomes();
  /** A new key's limit until its answers set it (ramp.ts). */
  readonly ramp = new Ramp();
  /** The member has just gone out: the next pump turns its pooled waiters away. */
  #ousting = false;

  /** `origin`: this instance's first ticket epoch (tickets/epoch.ts: above the last life's) and its own id prefix (random: a restart changes it). */
  constructor(base: LimiterConfig, saved?: Persisted, weights: LaneWeights = DEFAULT_WEIGHTS, origin = { epoch: 0, prefix: "" }) {
    this.tickets = new TicketBook(this.leases, origin.prefix);
    this.epoch = origin.epoch;
    this.queue = new WaitQueue<Waiter>(weights);
    this.#settings = new Settings(base, saved?.overrides ?? {});
    this.#adopt(learnedFrom(this.config, saved));
    rebound(this.aimd, this.config, 0, 0);
  }

  get config(): LimiterConfig {
    return this.#settings.config;
  }

  get overrides(): LimiterOverride {
    return this.#settings.overrides;
  }

  /** Vars may change between deploys; the learned limit stays but is kept within the new bounds. */
  setBase(base: LimiterConfig, now: number): void {
    this.#settings.setBase(base);
    rebound(this.aimd, this.config, now, this.inFlight);
  }

  /** Requests out (tickets not yet used hold slots, but no request). */
  get inFlight(): number {
    return this.leases.active;
  }

  /**
   * Slots the provider is busy with: held leases less the answers already complete whose Worker
   * has not released them yet. The limit counts these, as the provider's own cap does.
   */
  get busy(): number {
    return this.leases.busy + this.tickets.unseenSlots;
  }

  /** A key that has never had an answer opens gradually (ramp.ts). */
  learning(_now?: number): boolean {
    return this.metrics.totalRequests === 0 && this.metrics.retriedRequests === 0;
  }

  /** The concurrency limit in force now. */
  limitAt(now: number): number {
    return this.ramp.limit(now, this.learning(now), this.config.maxConcurrency, this.aimd.limit);
  }

  persisted(): Persisted {
    return persistedOf(this, this.overrides);
  }

  /** How long a refused caller should wait before trying again: from its own line and share (advice.ts). */
  retryAfter(cost: number, now: number, who: Pick<Waiter, "caller" | "lane" | "out"> = {}): number {
    const { ahead, share } = this.queue.standing(who.caller ?? DEFAULT_CALLER, who.lane ?? "normal");
    const openInMs = admission.openAt(this, cost, now, 1, false, false, who.out) - now;
    return comeBackAfter({ openInMs, ahead, share, limit: this.aimd.limit, avgLatencyMs: meanLatencyMs(this.metrics) ?? 1_000, ratePerMs: this.#ratePerMs() });
  }

  /** What callers are told so their own schedulers can size themselves: the limit, and the pace a quota sets. */
  pacing(): Pacing {
    return pacingOf(this.aimd.limit, this.#ratePerMs());
  }

  /** What a pooled request learns of this member, for the Worker's next choice (advice.ts); `out`: its output allowance. */
  view(cost: number, now: number, out?: number): MemberView {
    const v = memberView({
      openInMs: admission.openAt(this, cost, now, 1, false, false, out) - now, free: this.limitAt(now) - this.busy, queued: this.queue.size, limit: this.limitAt(now),
      avgLatencyMs: meanLatencyMs(this.metrics), ratePerMs: this.#ratePerMs(),
    });
    // While its probe is out, the others stay away a moment: its answer decides.
    const m = this.member;
    if (isOut(m)) Object.assign(v, { outMs: Math.max(m.until - now, m.probe !== null ? PROBE_WAIT_MS : 0), outReason: m.reason });
    return v;
  }

  /** Requests per ms the windows allow at the key's mean cost (null: no window known). */
  #ratePerMs(): number | null {
    return paceRate(this.quota, this.pace.cost ?? 1, this.pace.out ?? 0);
  }

  /** Queues a waiter, or turns it away (admission.ts). */
  enqueue(w: Waiter, now: number): Admission {
    return admission.enqueue(this, w, now);
  }

  /** Grants every waiter that may go now, in the queue's fair order (admission.ts). */
  pump(now: number): admission.Pumped {
    const ousting = this.#ousting;
    this.#ousting = false;
    return admission.pump(this, now, ousting);
  }

  /** When the next pump could change something (admission.ts). */
  wakeAt(now: number): number | null {
    return admission.wakeAt(this, now);
  }

  /**
   * Feeds one upstream outcome to AIMD, the quota model, the pace, the shared gate and the
   * metrics (outcomes.ts). Returns the limit change it caused, if any. Idempotent per lease id.
   */
  settle(id: string, o: Outcome, now: number): HistoryEntry | null {
    const first = this.learning();
    const was = tickets.settling(this, id, now);
    if (o.tier) this.tiers.note(o.tier, o.cls === "capacity", now);
    const r = this.#outcomes.settle(this, id, o, now);
    if (r.memberMoved) this.#ousting = isOut(this.member);
    if (tickets.takesBack(this, was, o.cls === "rate_limit" || r.memberMoved, now)) this.retake();
    // A refusal decides the limit from here; the first answer otherwise opens the key (ramp.ts).
    if (o.cls === "rate_limit") this.ramp.refused();
    else if (first && !this.learning()) {
      // A new key's first answer: it keeps what its learning ramp had out, and opens from there; at
      // once if this instance did not grant the slot (from before a restart: it cannot be placed).
      const changed = startFrom(this.aimd, this.config, this.inFlight, now, this.inFlight);
      this.ramp.open(this.leases.get(id)?.grantedAt === undefined ? null : opening(now, this.busy, this.aimd.limit, o.latencyMs, this.config.startConcurrency));
      return changed ?? r.changed;
    }
    return r.changed;
  }

  /**
   * After `settle`: when the attempt's retry may come back (outcomes.ts, retryWord). A tier's
   * capacity refusal while the key learns the tier, or once it has the tier shed, comes back at
   * once (tier-outlooks.ts): its grant then says whether it goes at the tier or at standard.
   */
  retryWord(o: Outcome, now: number): SettleAnswer {
    if (o.cls === "capacity" && !o.final && o.tier && this.tiers.againAtOnce(o.tier)) return { retry: "now" };
    return retryWord(this, o, now);
  }

  release(id: string, now: number): boolean {
    // A ticket given back unused: its slot and its reservation go (leases.ts), and nothing is charged.
    dropProbe(this.member, id);
    const lease = this.leases.release(id);
    if (lease && isTicket(id)) this.tickets.end(id);
    if (lease?.ok && lease.grantedAt !== undefined) noteHold(this.pace, now - lease.grantedAt);
    if (lease?.caller !== undefined) this.callers.released(lease.caller, now);
    return lease !== undefined;
  }

  /**
   * Extends a held lease. One it does not know (lost in a restart before it was written, or
   * expired while its Worker was slow) is still in flight: given its `cost`, it is held again, so
   * the key does not admit past it. Returns whether the lease was known.
   */
  renew(id: string, now: number, cost?: number): boolean {
    const ttl = this.config.leaseTtlMs;
    tickets.renewing(this, id, now, cost);
    if (this.leases.renew(id, now, ttl)) return true;
    if (cost !== undefined && Number.isFinite(cost) && cost >= 0) this.leases.hold(id, cost, now + ttl);
    return false;
  }

  /** A lease held before a restart: its Worker may still be streaming, and will renew or release it (a ticket: tickets/effects.ts). */
  restoreLease(id: string, cost: number, expiresAt: number, now: number, unused = true): void {
    tickets.restore(this, id, cost, expiresAt, now, unused);
  }

  /**
   * Tickets for an isolate that asks (tickets/policy.ts): slots and quota granted ahead of its
   * requests, while nobody waits and the key has room to spare. Returns their ids (none: ask as before).
   */
  issue(ask: Ask, now: number): string[] {
    tickets.lapse(this, now);
    const room = { queued: this.queue.size, claims: this.claims.size, gateOpen: this.cooldownUntil <= now, opening: this.learning() || this.limitAt(now) < this.aimd.limit, limit: this.limitAt(now) };
    return tickets.issue(this, room, ask, now);
  }

  /** After a restart that came while up to `slots` tickets may have been out: held back until they lapse (tickets/effects.ts). */
  holdBack(now: number, slots: number): void {
    tickets.holdBack(this, now, slots);
  }

  /** A request went upstream on ticket `id` (tickets/effects.ts). Returns whether the key held it. */
  useTicket(id: string, cost: number, now: number, caller?: string, lane?: Lane, out?: number): boolean {
    return tickets.use(this, id, cost, now, { who: { caller, lane } }, out);
  }

  /** Every ticket out is taken back: isolates use none of them once they hear of the new epoch (tickets/epoch.ts: it only grows). */
  retake(): void {
    this.epoch += 1;
  }

  /** The lease granted under `id`, if it is held. */
  lease(id: string): Lease | undefined {
    return this.leases.get(id);
  }

  cancel(id: string): Waiter | undefined {
    this.claims.drop(id);
    dropProbe(this.member, id);
    return this.queue.remove(id);
  }

  /** Drops leases whose holder never released them (a Worker that died mid-request). */
  expireLeases(now: number): Lease[] {
    tickets.lapse(this, now);
    const gone = this.leases.expired(now);
    for (const lease of gone) this.release(lease.id, now);
    return gone;
  }

  nextLeaseExpiry(): number | null {
    return this.leases.nextExpiry();
  }

  /** Applies a validated override; returns the reason it was refused, or null. */
  configure(override: LimiterOverride, now: number, check: (c: LimiterConfig) => string | null): string | null {
    const r = this.#settings.apply(override, check);
    if ("error" in r) return r.error;
    rebound(this.aimd, this.config, now, this.inFlight);
    if (r.limit !== undefined) setManual(this.aimd, this.config, r.limit, now, this.inFlight);
    this.retake();
    return null;
  }

  /** Back to defaults: overrides, learned limit, quotas, gate, metrics and history all cleared. */
  reset(): void {
    this.#settings.clear();
    this.#adopt(learnedFrom(this.config));
    this.ramp.reset();
    this.claims.clear();
    this.retake();
  }

  #adopt(l: Learned): void {
    this.aimd = l.aimd;
    this.quota = l.quota;
    this.pace = l.pace;
    this.cooldownUntil = l.cooldownUntil;
    this.metrics = l.metrics;
    this.member = l.member;
  }
}
