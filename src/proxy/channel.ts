import type { Limiter } from "../limiter/object";
import { TICKET_VALID_MS, TICKETS_PER_ISOLATE } from "../limiter/tickets/policy";
import type { ExchangeReply, KeyMeta, Op, OpResult } from "../limiter/types";
import { HeldTickets, type Redeemed } from "../limiter/tickets/isolate";

/**
 * How long a release or a plain settle may wait for the next acquire to carry it, when nobody is
 * queued at the key and it has slots to spare (so a slot handed back a moment later keeps nobody
 * waiting). The op carries its age, so the object still dates it when it happened. An acquire from
 * this isolate always carries it first, so the object never decides on an acquire without it.
 * 20 ms: a sequential caller's next request comes back within it on a nearby network, so one call
 * a request; a background call of its own costs a request about as much as the awaited one
 * (BENCHMARKS.md, hot path).
 */
export const LINGER_MS = 20;
/** Keys an isolate keeps a channel for; past it the least recently used goes (a new one is cheap). */
const CHANNELS_KEPT = 512;

export type Stub = Pick<DurableObjectStub<Limiter>, "exchange" | "settle" | "release" | "renew" | "cancel">;

/**
 * What the request that sends a batch lends it: a stub made in that request's context (stubs
 * belong to the request that made them) and its waitUntil, which keeps the call alive.
 */
export interface Carrier {
  stub: () => Stub;
  /** A new stub, for a retry after a failed call (a broken stub stays broken). */
  fresh: () => Stub;
  waitUntil: (p: Promise<unknown>) => void;
}

export type SetTimer = (fn: () => void, ms: number) => unknown;

type Entry = { op: Op; lease: string; at: number; held?: boolean; awaited?: { resolve: (r: OpResult) => void; reject: (e: unknown) => void } };

const leaseOf = (op: Op) => (op.t === "acquire" ? op.req.leaseId : op.id);

/** A background op on a call of its own (its batch, or its session, failed). All of them are idempotent. */
export function alone(stub: Stub, op: Op, meta: KeyMeta): Promise<unknown> {
  switch (op.t) {
    case "settle":
      return stub.settle(op.id, op.outcome);
    case "release":
      return stub.release(op.id, op.usage);
    case "renew":
      return stub.renew(op.id, op.cost);
    case "cancel":
      return stub.cancel(op.id);
    case "use":
      return stub.exchange(meta, [op]);
    case "acquire":
      return Promise.resolve();
  }
}

/**
 * One Worker isolate's line to one key's limiter: the calls of all its requests to that key ride
 * together in `exchange` batches.
 *
 * - An awaited op (an acquire, a settle a retry waits on) leaves at the end of its turn, from its
 *   own request, taking whatever is waiting with it. Only the request that sent a batch waits on
 *   its answer: a promise is never settled from another request's context.
 * - A background op (release, plain settle, renew, cancel) is fire-and-forget: it goes with the
 *   next batch, at the latest LINGER_MS later while nobody is queued at the key and it has two
 *   slots or more to spare, at once otherwise.
 *   The batch's sender keeps it alive and retries it alone on failure.
 * - A background op never overtakes an earlier op of its lease: while a batch with that lease is
 *   out it waits (requests' stubs keep no order between them).
 * - While the key has room, a batch asks for tickets (limiter/tickets.ts) and the isolate keeps
 *   what comes back: a request that finds one goes without a call (limiter-client.ts).
 */
export class Channel {
  #pending: Entry[] = [];
  /** Batches out per lease id. */
  #out = new Map<string, number>();
  #flushQueued = false;
  #lingering = false;
  /** Waiters at the key, and slots to spare, after the last batch; nothing lingers until known. */
  #queued = 1;
  #room = 0;
  /** Whether a batch has answered yet (until then `queued` and `room` are guesses). */
  #heard = false;
  /** The last answer said the key had no slot to spare. */
  #full = false;
  #meta: KeyMeta;
  /** Admissions granted ahead for this isolate's requests. */
  #tickets = new HeldTickets();
  /** A batch that asked for tickets is out. */
  #asking = false;
  #now: () => number;
  #linger: number;
  #setTimer: SetTimer;
  /** Batches sent, for tests. */
  batches = 0;

  constructor(meta: KeyMeta, now: () => number = Date.now, linger = LINGER_MS, setTimer: SetTimer = (fn, ms) => setTimeout(fn, ms)) {
    this.#meta = meta;
    this.#now = now;
    this.#linger = linger;
    this.#setTimer = setTimer;
  }

  /**
   * The key's queue is busy, as its last answer to this isolate said: a request that asks now will
   * likely wait (limiter-client.ts then opens a session, whose grant needs no second call).
   */
  get busy(): boolean {
    return this.#heard && (this.#queued > 0 || this.#full);
  }

  /** What an answer from the key's object said of its queue (a batch's, or a session's). */
  note(reply: { queued: number; room?: number }): void {
    this.#queued = reply.queued;
    this.#room = reply.room ?? 0;
    this.#full = reply.room === 0;
    this.#heard = true;
  }

  /**
   * What a session's answer said of the key: its queue, and its ticket epoch (tickets of another
   * go back, through `carrier`). `mark`: `mark` when its call left.
   */
  answered(reply: Pick<ExchangeReply, "queued" | "room" | "epoch" | "tickets">, carrier: Carrier, mark?: number): void {
    this.note(reply);
    this.#giveBack(this.#tickets.heard(reply, this.#now(), mark), carrier);
  }

  /** Answers heard so far: a call that leaves now gives it back with its answer (tickets.ts, `heard`). */
  get mark(): number {
    return this.#tickets.mark;
  }

  /** A ticket for a request of `cost` (and `out` of output) arriving now, or null (tickets.ts). */
  redeem(cost: number, out?: number): Redeemed | null {
    return this.#tickets.take(cost, this.#now(), out);
  }

  /**
   * Down to half its tickets with no ask on its way: the next batch should leave at once, to bring
   * more before a request must call for its slot.
   */
  get runningLow(): boolean {
    return !this.#asking && this.#tickets.size <= TICKETS_PER_ISOLATE / 2;
  }

  /** An op whose result the sender awaits: it leaves at the end of this turn. */
  call(op: Op, carrier: Carrier): Promise<OpResult> {
    return new Promise<OpResult>((resolve, reject) => {
      this.#pending.push({ op, lease: leaseOf(op), at: this.#now(), awaited: { resolve, reject } });
      this.#soon(carrier);
    });
  }

  /** A fire-and-forget op. `urgent`: leaves at the end of this turn even when nobody waits. */
  post(op: Op, carrier: Carrier, urgent = false): void {
    this.#pending.push({ op, lease: leaseOf(op), at: this.#now() });
    if (urgent || this.#queued > 0 || this.#room < 2 || this.#linger <= 0) this.#soon(carrier);
    else if (!this.#lingering) {
      // The request that starts the wait stays alive until it ends, and sends what is left then.
      this.#lingering = true;
      carrier.waitUntil(
        new Promise<void>((done) =>
          this.#setTimer(() => {
            this.#lingering = false;
            this.#flush(carrier);
            done();
          }, this.#linger),
        ),
      );
    }
  }

  /** At the end of this turn: ops made in the same turn go together. */
  #soon(carrier: Carrier): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => {
      this.#flushQueued = false;
      this.#flush(carrier);
    });
  }

  #flush(carrier: Carrier): void {
    const now = this.#now();
    for (const id of this.#tickets.expired(now)) this.#pending.push({ op: { t: "release", id }, lease: id, at: now });
    const batch: Entry[] = [];
    const held: Entry[] = [];
    for (const e of this.#pending) {
      e.held = !e.awaited && this.#out.has(e.lease);
      (e.held ? held : batch).push(e);
    }
    this.#pending = held;
    if (batch.length === 0) return;
    this.batches++;
    const ops = batch.map((e) => (now > e.at ? { ...e.op, ageMs: now - e.at } : e.op));
    for (const e of batch) this.#out.set(e.lease, (this.#out.get(e.lease) ?? 0) + 1);
    const ask = this.busy ? undefined : this.#tickets.ask(now);
    if (ask) this.#asking = true;
    const mark = this.#tickets.mark;
    let call: Promise<ExchangeReply>;
    try {
      call = (ask ? carrier.stub().exchange(this.#meta, ops, ask) : carrier.stub().exchange(this.#meta, ops)) as Promise<ExchangeReply>;
    } catch (err) {
      call = Promise.reject(err);
    }
    const back = call
      .then(
        (reply) => {
          if (ask) this.#asking = false;
          this.note(reply);
          batch.forEach((e, i) => e.awaited?.resolve(reply.results[i]!));
          this.#giveBack(this.#tickets.heard(reply, now, mark), carrier);
          if (reply.tickets) this.#sweep(carrier);
        },
        async (err: unknown) => {
          if (ask) this.#asking = false;
          for (const e of batch) e.awaited?.reject(err);
          const left = batch.filter((e) => !e.awaited);
          if (left.length === 0) return;
          const stub = carrier.fresh();
          await Promise.all(left.map((e) => alone(stub, e.op, this.#meta).catch(() => {})));
        },
      )
      .finally(() => {
        for (const e of batch) {
          const n = (this.#out.get(e.lease) ?? 1) - 1;
          if (n > 0) this.#out.set(e.lease, n);
          else this.#out.delete(e.lease);
        }
        // Ops that waited for this batch go now, from the request that is still alive to send them.
        if (this.#pending.some((e) => e.held && !this.#out.has(e.lease))) this.#flush(carrier);
      });
    carrier.waitUntil(back);
  }

  /** Tickets this isolate will not use go back to the object with the next batch. */
  #giveBack(ids: string[], carrier: Carrier): void {
    for (const id of ids) this.post({ t: "release", id }, carrier);
  }

  /**
   * Tickets past their time go back even if no batch comes to carry them: from the request whose
   * batch brought them, kept alive until then.
   */
  #sweep(carrier: Carrier): void {
    carrier.waitUntil(
      new Promise<void>((done) =>
        this.#setTimer(() => {
          this.#giveBack(this.#tickets.expired(this.#now()), carrier);
          done();
        }, TICKET_VALID_MS),
      ),
    );
  }
}

const channels = new Map<string, Channel>();

/** This isolate's channel to a key, most recently used last. */
export function channelFor(meta: KeyMeta): Channel {
  let ch = channels.get(meta.key);
  if (ch) channels.delete(meta.key);
  else ch = new Channel({ key: meta.key, provider: meta.provider, model: meta.model });
  channels.set(meta.key, ch);
  if (channels.size > CHANNELS_KEPT) channels.delete(channels.keys().next().value as string);
  return ch;
}
