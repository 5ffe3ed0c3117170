import { renewEvery } from "../limiter/core";
import type { Limiter } from "../limiter/object";
import type { AcquireRequest, AcquireResult, KeyMeta, Op, OpResult, Queued, SettleAnswer, SettleRequest } from "../limiter/types";
import type { UsageRecord } from "../usage/types";
import { alone, type Carrier, type Channel, channelFor } from "./channel";
import { Session } from "./session";

/** The key's limiter could not be asked in time: fail closed, never send around it. */
export class LimiterUnavailable extends Error {
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number, message: string) {
    super(message);
    this.retryAfterMs = retryAfterMs;
  }
}

/** Beyond the caller's deadline, how long an acquire may take to come back before we give up on it. */
const GRACE_MS = 2_000;
const RETRY_PAUSE_MS = 50;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Flags = { retryable?: boolean; overloaded?: boolean };

/** What the retry loop (proxy/run.ts) asks of a key's limiter; the simulator provides its own. */
export interface LimiterCalls {
  acquire(req: Omit<AcquireRequest, "waitMs">, deadline: number): Promise<AcquireResult>;
  settle(leaseId: string, outcome: SettleRequest): void;
  /** Settles and waits: the limiter's word on when the retry may come (undefined: it could not say). */
  settleNow(leaseId: string, outcome: SettleRequest): Promise<SettleAnswer | undefined>;
  /** `usage`: a streamed answer's, known when its body has ended. */
  release(leaseId: string, usage?: UsageRecord): void;
  cancel(leaseId: string): void;
  keepAlive(leaseId: string, ttlMs: number, cost?: number): () => void;
}

export interface ClientOptions {
  /** The request's waitUntil: background calls outlive its response. */
  waitUntil: (p: Promise<unknown>) => void;
  now?: () => number;
  /** Default: this isolate's channel to the key. */
  channel?: Channel;
  /** `LIMITER_LOCATION`: where the object is created, the first time. */
  location?: DurableObjectLocationHint;
}

const queued = (r: OpResult): r is Queued => typeof r === "object" && "queued" in r;

/**
 * The Worker's side of one key's Limiter, for one request. Two ways to the object, chosen by what
 * the key's last answer to this isolate said of its queue:
 *
 * - **Room at the key**: the request's ops ride this isolate's channel (channel.ts), in `exchange`
 *   batches with other requests' (a release waits up to LINGER_MS for another request's acquire to
 *   carry it). About one call a request, each as light as a call gets.
 * - **A busy queue**: its first acquire opens a session (session.ts): one call whose streams carry
 *   the queued grant back and every later op of the request to the object. One call a request
 *   where the channel's would be three (a batch, a second call to wait on the place, a release
 *   that leaves at once); a session's streams cost the call about a millisecond more, which a
 *   request that waits in line does not notice.
 *
 * - **A ticket**: while the key has room, its object hands this isolate's channel admissions
 *   ahead (limiter/tickets.ts). A first attempt that finds one goes upstream with no call: the
 *   ticket's use and the request's later ops (under the ticket's id) go back on the channel.
 *
 * A call that fails is tried again on a fresh stub (the object may have restarted); an op neither
 * way can take goes on a call of its own.
 */
export class LimiterClient implements LimiterCalls {
  /** Made when a call first needs it: a request that goes on a ticket makes none. */
  #stubMade: DurableObjectStub<Limiter> | null = null;
  #idMade: DurableObjectId | null = null;
  #ns: DurableObjectNamespace<Limiter>;
  #meta: KeyMeta;
  #location: DurableObjectLocationHint | undefined;
  #now: () => number;
  #waitUntil: (p: Promise<unknown>) => void;
  #channel: Channel;
  #carrier: Carrier;
  #session: Session | null = null;
  /** Lease ids of this request's attempts that went on a ticket, and the ticket's id at the object. */
  #ticketOf = new Map<string, string>();

  constructor(ns: DurableObjectNamespace<Limiter>, meta: KeyMeta, o: ClientOptions) {
    this.#ns = ns;
    this.#meta = { key: meta.key, provider: meta.provider, model: meta.model };
    this.#now = o.now ?? Date.now;
    this.#location = o.location;
    this.#waitUntil = o.waitUntil;
    this.#channel = o.channel ?? channelFor(meta);
    this.#carrier = {
      stub: () => this.#stub,
      fresh: () => (this.#stub = this.#fresh()),
      waitUntil: o.waitUntil,
    };
  }

  async acquire(req: Omit<AcquireRequest, "waitMs">, deadline: number): Promise<AcquireResult> {
    // A retry goes through the queue (at the head of its line), a pool's member choice needs its
    // object's answer, and so does a tier the key may have shed: only a request's first attempt at
    // a key of its own, at standard, takes a ticket.
    const t = req.retry || req.pooled || req.tier || this.#session?.open ? null : this.#channel.redeem(req.cost, req.out);
    if (t) {
      this.#ticketOf.set(req.leaseId, t.id);
      // Its use waits for company, unless the isolate is down to its last ticket: then it leaves
      // now and asks for more, before the next request must call.
      this.#channel.post({ t: "use", id: t.id, cost: req.cost, ...(req.out !== undefined && { out: req.out }), ...(req.caller !== undefined && { caller: req.caller }), ...(req.priority && { priority: req.priority }) }, this.#carrier, this.#channel.runningLow);
      const { id: _id, ...grant } = t;
      return { granted: true, leaseId: req.leaseId, waitedMs: 0, ...grant };
    }
    const waitMs = () => Math.max(0, deadline - this.#now());
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LimiterUnavailable(1_000, "the limiter did not answer in time")), waitMs() + GRACE_MS);
      });
      try {
        const { key: _k, provider: _p, model: _m, ...rest } = req;
        const op = { t: "acquire" as const, req: { ...rest, waitMs: waitMs() } };
        const r = await Promise.race([this.#ask(op, () => this.#stub.acquire({ ...req, waitMs: waitMs() }) as Promise<AcquireResult>), timeout]);
        // Turned away: this request is done with the key for now (a pooled one tries another member).
        if (!r.granted) this.#end();
        return r;
      } catch (err) {
        this.#end();
        if (err instanceof LimiterUnavailable) throw err;
        const flags = (err ?? {}) as Flags;
        if (flags.overloaded) throw new LimiterUnavailable(1_000, "the limiter is overloaded");
        if (!flags.retryable || this.#now() + RETRY_PAUSE_MS >= deadline) throw new LimiterUnavailable(1_000, "the limiter could not be reached");
        await sleep(RETRY_PAUSE_MS);
        this.#stub = this.#fresh();
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    }
  }

  settle(leaseId: string, outcome: SettleRequest): void {
    this.#tell({ t: "settle", id: this.#idOf(leaseId), outcome }, outcome.final && !!outcome.release);
  }

  /** Settles and waits for it: used before a retry, so the shared gate is shut before anyone else goes. */
  async settleNow(lease: string, outcome: SettleRequest): Promise<SettleAnswer | undefined> {
    const leaseId = this.#idOf(lease);
    const op: Op = { t: "settle", id: leaseId, outcome };
    try {
      const r = this.#session?.open ? await this.#session.ask(op) : await this.#channel.call(op, this.#carrier);
      if (outcome.final) this.#end();
      return answer(r);
    } catch {
      this.#end();
      this.#stub = this.#fresh();
      return answer(await this.#stub.settle(leaseId, outcome).catch(() => undefined));
    }
  }

  release(leaseId: string, usage?: UsageRecord): void {
    const id = this.#idOf(leaseId);
    this.#tell(usage ? { t: "release", id, usage } : { t: "release", id }, true);
  }

  cancel(leaseId: string): void {
    this.#tell({ t: "cancel", id: this.#idOf(leaseId) }, true, true);
  }

  /**
   * Keeps a held lease alive while the provider is slow or the stream long. Returns the stopper.
   * The renewal carries the lease's cost: an object that lost the lease (a restart before it was
   * written) takes it back, rather than admitting past it while it runs.
   */
  keepAlive(leaseId: string, ttlMs: number, cost?: number): () => void {
    const id = this.#idOf(leaseId);
    const timer = setInterval(() => this.#tell({ t: "renew", id, cost }, false), renewEvery(ttlMs));
    return () => clearInterval(timer);
  }

  /**
   * An acquire: on the open session; else a new session when the key's queue is busy; else the
   * channel, where a `queued` answer is waited for with `wait` (a second call, on the place the
   * first one got: the key turned busy since its last answer).
   */
  async #ask(op: Op, wait: () => Promise<AcquireResult>): Promise<AcquireResult> {
    if (this.#session?.open) return (await this.#session.ask(op)) as AcquireResult;
    if (!this.#channel.busy) {
      const first = await this.#channel.call(op, this.#carrier);
      return queued(first) ? wait() : (first as AcquireResult);
    }
    const s = new Session();
    this.#session = s;
    const mark = this.#channel.mark;
    const reply = await this.#stub.session(this.#meta, op, s.more);
    this.#channel.answered(reply, this.#carrier, mark);
    const first = reply.results[0]!;
    const answer = queued(first) ? s.first() : null;
    s.listen(reply.answers, this.#waitUntil);
    return (answer ? await answer : first) as AcquireResult;
  }

  /**
   * A fire-and-forget op: on the open session (if it cannot take it, on a call of its own), else
   * on the channel. `last`: the request is done with the key; `urgent`: it leaves at once.
   */
  #tell(op: Op, last: boolean, urgent = false): void {
    const s = this.#session?.open ? this.#session : null;
    if (!s) {
      if (last) this.#end();
      return this.#channel.post(op, this.#carrier, urgent);
    }
    const sent = s.tell(op);
    if (last) this.#end();
    this.#waitUntil(
      sent.then((ok) => {
        if (!ok) return alone(this.#fresh(), op, this.#meta).catch(() => {});
      }),
    );
  }

  /** The id the object knows an attempt's lease by: its ticket's, if it went on one. */
  #idOf(leaseId: string): string {
    return this.#ticketOf.get(leaseId) ?? leaseId;
  }

  #end(): void {
    this.#session?.close();
    this.#session = null;
  }

  get #stub(): DurableObjectStub<Limiter> {
    return (this.#stubMade ??= this.#fresh());
  }

  set #stub(s: DurableObjectStub<Limiter>) {
    this.#stubMade = s;
  }

  /** A new stub (a broken one stays broken); the hint only matters when the object is first created. */
  #fresh(): DurableObjectStub<Limiter> {
    this.#idMade ??= this.#ns.idFromName(this.#meta.key);
    return this.#ns.get(this.#idMade, this.#location ? { locationHint: this.#location } : undefined);
  }
}

/** A settle's result is the limiter's word on the retry; an older object answers `true`. */
const answer = (r: unknown) => (typeof r === "object" && r !== null && "retry" in r ? (r as SettleAnswer) : undefined);
