import type { LimiterConfig, LimiterOverride } from "../config/limits";
import { type AimdState, fitPace, type HistoryEntry, noteInFlight, paceCeiling, rebound, setManual, startFrom } from "./aimd";
import { comeBackAfter, memberView, pacingOf } from "./advice";
import { CallerBook, DEFAULT_CALLER } from "./callers";
import { Claims } from "./claims";
import { DEFAULT_WEIGHTS, isLane, type LaneWeights } from "./lanes";
import { Leases } from "./leases";
import { admitPooled, dropProbe, isOut, type OutState, PROBE_WAIT_MS } from "./membership";
import type { Metrics } from "./metrics";
import { Outcomes, retryWord } from "./outcomes";
import { noteCost, noteHold, paceDueAt, paceNeed, type PaceState } from "./pace";
import { charge, fitsAt, paceRate, type QuotaState, tight } from "./quota";
import { neverFits, type TooLarge } from "./too-large";
import { type Waiter, WaitQueue } from "./queue";
import { type Learned, learnedFrom, persistedOf, Settings } from "./settings";
import type { Admission, Lease, Outcome, Persisted } from "./state";
import { learningLimit, nextLearningStep, nextOpeningStep, type Opening, opening, openingLimit, SEND_JITTER_MS } from "./timing";
import type { MemberView, Pacing, SettleAnswer } from "./types";
import { isTicket, TicketBook } from "./tickets/book";
import { TierOutlooks } from "./tier-outlooks";
import { holdBack, issue as issueTickets, lapse, use, windows } from "./tickets/effects";
import { type Ask, fellBelow, TICKET_LAPSE_MS } from "./tickets/policy";
import type { Lane } from "./lanes";

export type { Admission, Lease, Outcome, Persisted } from "./state";
export { NO_HINT_GATE_MS } from "./outcomes";
export { ADMISSION_LAG_MS, CLAIM_GRACE_MS, LEARN_MS, LEARN_STEP_MS, SEND_JITTER_MS } from "./timing";

/** How often a Worker renews a lease it holds; a restored lease is given about this long. */
export const renewEvery = (ttlMs: number) => Math.max(250, Math.floor(ttlMs / 3));

/**
 * The whole limiter as a pure state machine: the Durable Object (and the batch runner, in-process)
 * feed it calls and the time, and act on what it returns. It never reads a clock or does I/O.
 * Admission (who goes, and when) is here; the slots are Leases (leases.ts), what answers teach is
 * outcomes.ts, and the operator's settings and what survives a restart are settings.ts.
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
  /** Tickets out (tickets.ts): slots and quota granted to isolates ahead of their requests. */
  readonly tickets: TicketBook;
  /** The key's outlook of each service tier it is asked at (tier-outlooks.ts). */
  readonly tiers = new TierOutlooks();
  /** Changes whenever the tickets out are taken back: an isolate uses none of an older epoch. */
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
  /** The member has just gone out: the next pump turns its pooled waiters away. */
  #ousting = false;
  /** When a never-answered key sent its first request. */
  #probeAt: number | null = null;
  /** A new key's opening after its first answer (timing.ts), until a refusal. */
  #opening: Opening | null = null;

  /** `origin`: this instance's first ticket epoch (epoch.ts: above the last life's) and its own id prefix (random: a restart changes it). */
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

  /** A key that has never had an answer opens gradually (timing.ts, learningLimit). */
  learning(_now?: number): boolean {
    return this.metrics.totalRequests === 0 && this.metrics.retriedRequests === 0;
  }

  /** The concurrency limit in force now. */
  limitAt(now: number): number {
    // While learning the ramp is the limit, past START_CONCURRENCY if the answer is that slow: a
    // refusal would have come back and ended it, and a 3 s answer at 600 RPM needs 30 out.
    if (this.learning(now)) return Math.min(this.config.maxConcurrency, learningLimit(this.#probeAt, now));
    return this.#opening ? openingLimit(this.#opening, now, this.aimd.limit) : this.aimd.limit;
  }

  persisted(): Persisted {
    return persistedOf(this, this.overrides);
  }

  /**
   * Earliest time a waiter of `cost` may be sent, as far as the send gate and quotas know.
   * `granting`: what the tickets out reserve comes first (they are already granted); an estimate
   * for a caller leaves them out, since they come back or lapse within TICKET_LAPSE_MS.
   */
  #openAt(cost: number, now: number, requests = 1, behind = false, granting = false): number {
    const r = granting ? this.tickets.reserved : { requests: 0, tokens: 0 };
    return Math.max(this.cooldownUntil, fitsAt(this.quota, cost + r.tokens, now, requests + r.requests, behind || r.requests > 0, SEND_JITTER_MS));
  }

  /** How long a refused caller should wait before trying again: from its own line and share (advice.ts). */
  retryAfter(cost: number, now: number, who: Pick<Waiter, "caller" | "lane"> = {}): number {
    const avgLatencyMs = this.metrics.latencyCount ? this.metrics.latencySum / this.metrics.latencyCount : 1_000;
    const { ahead, share } = this.queue.standing(who.caller ?? DEFAULT_CALLER, who.lane ?? "normal");
    const openInMs = this.#openAt(cost, now) - now;
    return comeBackAfter({ openInMs, ahead, share, limit: this.aimd.limit, avgLatencyMs, ratePerMs: paceRate(this.quota, this.pace.cost ?? 1) });
  }

  /** What callers are told so their own schedulers can size themselves: the limit, and the pace a quota sets. */
  pacing(): Pacing {
    return pacingOf(this.aimd.limit, paceRate(this.quota, this.pace.cost ?? 1));
  }

  /** What a pooled request learns of this member, for the Worker's next choice (advice.ts). */
  view(cost: number, now: number): MemberView {
    const v = memberView({
      openInMs: this.#openAt(cost, now) - now, free: this.limitAt(now) - this.busy, queued: this.queue.size, limit: this.limitAt(now),
      avgLatencyMs: this.metrics.latencyCount ? this.metrics.latencySum / this.metrics.latencyCount : null, ratePerMs: paceRate(this.quota, this.pace.cost ?? 1),
    });
    // While its probe is out, the others stay away a moment: its answer decides.
    const m = this.member;
    if (isOut(m)) Object.assign(v, { outMs: Math.max(m.until - now, m.probe !== null ? PROBE_WAIT_MS : 0), outReason: m.reason });
    return v;
  }

  /**
   * Queues a waiter in its caller's line (past the cap on callers, the overflow caller's), unless
   * the gate or a quota will stay shut past its deadline.
   */
  enqueue(w: Waiter, now: number): Admission {
    const tooLarge = neverFits(this.quota, w.cost, now);
    if (tooLarge) return { kind: "rejected", retryAfterMs: 0, tooLarge };
    if (w.pooled) {
      const may = admitPooled(this.member, w.id, now);
      if (!may.go) return { kind: "rejected", retryAfterMs: may.retryAfterMs, out: true };
    }
    const open = this.#openAt(w.cost, now);
    if (open > w.deadline) return { kind: "rejected", retryAfterMs: this.retryAfter(w.cost, now, w) };
    w.lane = isLane(w.lane) ? w.lane : "normal";
    let queued: Map<string, number> | undefined;
    w.caller = this.callers.admit(w.caller, w.lane, now, (c) => (queued ??= this.queue.queuedBy()).has(c));
    this.queue.push(w);
    return { kind: "queued" };
  }

  /**
   * Grants, in the queue's fair order, every waiter that may go now, and expires the ones past
   * their deadline (or whose deadline the send gate outlasts). The head the queue chooses holds
   * the line when it does not fit its quota, so large requests never starve.
   */
  pump(now: number): { granted: Waiter[]; expired: Waiter[]; ousted: Waiter[]; tooLarge: [Waiter, TooLarge][] } {
    lapse(this, now);
    // A member just gone out of its pool sends its pooled waiters to the other members.
    const ousted = this.#ousting ? [...this.queue].filter((w) => w.pooled && w.id !== this.member.probe) : [];
    for (const w of ousted) this.cancel(w.id);
    this.#ousting = false;
    // A waiter whose deadline falls before the send gate opens can never go: it hears so now,
    // with the gate's retry-after, rather than at its deadline.
    const hopeless = this.cooldownUntil > now ? this.cooldownUntil - 1 : now;
    const expired = this.queue.takeExpired(hopeless);
    for (const w of expired) {
      this.claims.drop(w.id);
      dropProbe(this.member, w.id);
    }
    this.claims.expire(now);
    const granted: Waiter[] = [];
    const go = (w: Waiter) => {
      this.#grant(w.id, w.cost, now, w.caller);
      granted.push(w);
    };
    // A head that a limit told since it queued says can never fit is turned away, not waited for.
    const tooLarge: [Waiter, TooLarge][] = [];
    const turnAway = (w: Waiter) => {
      const why = neverFits(this.quota, w.cost, now);
      if (why) tooLarge.push([this.cancel(w.id)!, why]);
      return why !== null;
    };
    // Retries holding a claim go first, each when the refill it claimed is there. They are taken
    // out of fair order: the fair share charged their first attempt already.
    for (const c of this.claims.inOrder()) {
      const w = this.queue.has(c.id) ? this.queue.peekId(c.id) : undefined;
      if (!w || turnAway(w)) continue;
      if (this.#openAt(c.tokens, now, c.requests, false, true) > now) break;
      if (this.busy >= this.limitAt(now) && !this.#paced(now)) break;
      this.queue.remove(c.id);
      this.claims.drop(c.id);
      go(w);
    }
    for (let head = this.queue.peek(); head; head = this.queue.peek()) {
      if (!this.claims.has(head.id) && turnAway(head)) continue;
      if (this.claims.has(head.id) || this.#headOpenAt(head.cost, now) > now) break;
      if (this.busy >= this.limitAt(now) && !this.#paced(now)) break;
      this.queue.shift();
      go(head);
    }
    // Someone waits: under contention every request goes through the queue, so the tickets out
    // are taken back (an isolate that hears of it gives its own back; the rest come back or lapse).
    if (this.queue.size > 0) this.retake();
    return { granted, expired, ousted, tooLarge };
  }

  /** When a head of `cost` may go: after the gate, and after what every open claim needs. */
  #headOpenAt(cost: number, now: number): number {
    if (this.claims.size === 0) return this.#openAt(cost, now, 1, false, true);
    const held = this.claims.total();
    return this.#openAt(cost + held.tokens, now, held.requests + 1, true, true);
  }

  /**
   * The limit, not the quota, holds back a head the quota would admit. If the quota is what binds
   * this key (a window cannot pay for the whole line), the limit must not: raise it to the pace.
   * Where the windows have plenty, it stays slow start's job to find a concurrency cap.
   */
  #paced(now: number): boolean {
    if (this.learning(now) || !this.#tightNow(now)) return false;
    const oldest = this.leases.oldestGrantAt();
    const need = paceNeed(this.pace, this.quota, oldest === null ? 0 : now - oldest);
    if (need === null) return false;
    fitPace(this.aimd, this.config, need, now, this.inFlight);
    return this.busy < this.limitAt(now);
  }

  /** A window cannot pay for the whole line now: the quota, not concurrency, binds this key. */
  #tightNow(now: number): boolean {
    const waiting = this.queue.size;
    return tight(this.quota, waiting, waiting * (this.pace.cost ?? 1), now);
  }

  #grant(id: string, cost: number, now: number, caller?: string): void {
    const lease = this.leases.grant(id, cost, now, this.config.leaseTtlMs, caller);
    if (caller !== undefined) this.callers.granted(caller, cost, now);
    this.#probeAt ??= now;
    charge(this.quota, cost, now);
    noteCost(this.pace, cost);
    lease.mark = { ...this.quota.granted };
    noteInFlight(this.aimd, this.inFlight);
  }

  /** When the next pump could change something: gate or quota opening, or a deadline. */
  wakeAt(now: number): number | null {
    const head = this.queue.peek();
    // Every head may be held by its caller's cap: a release will pump, but deadlines still run.
    if (!head) return this.queue.earliestDeadline();
    let at = Math.min(this.queue.earliestDeadline() ?? Infinity, this.claims.earliestEnd() ?? Infinity);
    // A lapse turns a ticket's reservation into a charge, which refills.
    at = Math.min(at, this.tickets.nextLapse() ?? Infinity);
    if (this.busy < this.limitAt(now)) at = Math.min(at, this.#headOpenAt(head.cost, now), this.#claimOpenAt(now));
    else if (this.learning(now) && this.#probeAt !== null && this.limitAt(now) < this.config.maxConcurrency)
      at = Math.min(at, nextLearningStep(this.#probeAt, now));
    else if (this.#opening && this.limitAt(now) < this.aimd.limit) at = Math.min(at, nextOpeningStep(this.#opening, now));
    // Before the first answer the pace is sized from how long the oldest slot has been held, a
    // bound that grows with time: look again when it will have grown past the limit.
    else if (this.#tightNow(now)) {
      const oldest = this.leases.oldestGrantAt();
      const due = oldest === null ? null : paceDueAt(this.pace, this.quota, oldest, this.limitAt(now));
      const canRise = this.aimd.limit < paceCeiling(this.aimd, this.config);
      if (due !== null && due > now && canRise) at = Math.min(at, Math.max(due, this.#openAt(head.cost, now)));
    }
    return Number.isFinite(at) ? Math.max(at, now) : null;
  }

  /** When the first claim whose retry is already queued may go. */
  #claimOpenAt(now: number): number {
    for (const c of this.claims.inOrder()) if (this.queue.has(c.id)) return this.#openAt(c.tokens, now, c.requests, false, true);
    return Infinity;
  }

  /**
   * Feeds one upstream outcome to AIMD, the quota model, the pace, the shared gate and the
   * metrics (outcomes.ts). Returns the limit change it caused, if any. Idempotent per lease id.
   */
  settle(id: string, o: Outcome, now: number): HistoryEntry | null {
    const first = this.learning();
    // A settle means a request went upstream: on a ticket whose use has not arrived yet, too.
    if (this.leases.get(id)?.ticket !== undefined) use(this, id, Number.NaN, now);
    const was = windows(this, now);
    if (o.tier) this.tiers.note(o.tier, o.cls === "capacity", now);
    const r = this.#outcomes.settle(this, id, o, now);
    if (r.memberMoved) this.#ousting = isOut(this.member);
    // A 429, or a reading below the model, takes back every ticket out.
    const is = windows(this, now);
    if (o.cls === "rate_limit" || r.memberMoved || fellBelow(was.requests, is.requests, 1) || fellBelow(was.tokens, is.tokens, this.pace.cost ?? 1)) this.retake();
    // A refusal decides the limit from here; the first answer otherwise opens the key (timing.ts).
    if (o.cls === "rate_limit") this.#opening = null;
    else if (first && !this.learning()) return this.#opened(id, o, now) ?? r.changed;
    return r.changed;
  }

  /** A new key's first answer (not a refusal): it keeps what its learning ramp had out, and opens from there. */
  #opened(id: string, o: Outcome, now: number): HistoryEntry | null {
    const changed = startFrom(this.aimd, this.config, this.inFlight, now, this.inFlight);
    // An answer to a slot this instance did not grant (from before a restart) cannot be placed: open at once, as before.
    this.#opening = this.leases.get(id)?.grantedAt === undefined ? null : opening(now, this.busy, this.aimd.limit, o.latencyMs, this.config.startConcurrency);
    return changed;
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
    // Only a request out renews: on a ticket whose use has not arrived (or one this life never
    // saw, after a restart), it is used now.
    const lease = this.leases.get(id);
    if (lease ? lease.ticket !== undefined : isTicket(id)) use(this, id, cost ?? Number.NaN, now);
    if (this.leases.renew(id, now, ttl)) return true;
    if (cost !== undefined && Number.isFinite(cost) && cost >= 0) this.leases.hold(id, cost, now + ttl);
    return false;
  }

  /**
   * A lease held before a restart: its Worker may still be streaming, and will renew or release it.
   * A ticket its row says was not used is restored as a ticket, its lapse counted from now: an
   * isolate may still use it, and its use (or lapse) is its one charge. A used one is a request
   * out, charged already (its row and the windows are written together): held as a lease.
   */
  restoreLease(id: string, cost: number, expiresAt: number, now: number, unused = true): void {
    if (isTicket(id) && unused) this.leases.ticket(id, cost, expiresAt, now + TICKET_LAPSE_MS);
    else this.leases.hold(id, cost, expiresAt);
  }

  /**
   * Tickets for an isolate that asks (tickets.ts): slots and quota granted ahead of its requests,
   * while nobody waits and the key has room to spare. Returns their ids (none: ask as before).
   */
  issue(ask: Ask, now: number): string[] {
    lapse(this, now);
    const room = { queued: this.queue.size, claims: this.claims.size, gateOpen: this.cooldownUntil <= now, opening: this.learning() || this.limitAt(now) < this.aimd.limit, limit: this.limitAt(now) };
    return issueTickets(this, room, ask, now);
  }

  /** After a restart that came while up to `slots` tickets may have been out: held back until they lapse (ticketing.ts). */
  holdBack(now: number, slots: number): void {
    holdBack(this, now, slots);
  }

  /** A request went upstream on ticket `id` (ticketing.ts). Returns whether the key held it. */
  useTicket(id: string, cost: number, now: number, caller?: string, lane?: Lane): boolean {
    return use(this, id, cost, now, { who: { caller, lane } });
  }

  /** Every ticket out is taken back: isolates use none of them once they hear of the new epoch (epoch.ts: it only grows). */
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
    lapse(this, now);
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
    this.#probeAt = null;
    this.#opening = null;
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
