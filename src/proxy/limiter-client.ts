import { renewEvery } from "../limiter/core";
import type { Limiter } from "../limiter/object";
import type { AcquireRequest, AcquireResult, KeyMeta, OpResult, Queued, SettleAnswer, SettleRequest } from "../limiter/types";
import type { UsageRecord } from "../usage/types";
import { type Carrier, type Channel, channelFor } from "./channel";

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
 * The Worker's side of one key's Limiter. Its calls ride this isolate's channel to the key, in
 * batches with other requests' calls; an acquire not answered at once is waited for with its own
 * call. A failed call is tried again on a fresh stub (the object may have restarted).
 */
export class LimiterClient implements LimiterCalls {
  private stub: DurableObjectStub<Limiter>;
  private id: DurableObjectId;
  private ns: DurableObjectNamespace<Limiter>;
  private location: DurableObjectLocationHint | undefined;
  private now: () => number;
  private channel: Channel;
  private carrier: Carrier;

  constructor(ns: DurableObjectNamespace<Limiter>, meta: KeyMeta, o: ClientOptions) {
    this.ns = ns;
    this.now = o.now ?? Date.now;
    this.id = ns.idFromName(meta.key);
    this.location = o.location;
    this.stub = this.fresh();
    this.channel = o.channel ?? channelFor(meta);
    this.carrier = {
      stub: () => this.stub,
      fresh: () => (this.stub = this.fresh()),
      waitUntil: o.waitUntil,
    };
  }

  async acquire(req: Omit<AcquireRequest, "waitMs">, deadline: number): Promise<AcquireResult> {
    const waitMs = () => Math.max(0, deadline - this.now());
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LimiterUnavailable(1_000, "the limiter did not answer in time")), waitMs() + GRACE_MS);
      });
      try {
        const { key: _k, provider: _p, model: _m, ...rest } = req;
        const op = { t: "acquire" as const, req: { ...rest, waitMs: waitMs() } };
        const first = await Promise.race([this.channel.call(op, this.carrier), timeout]);
        if (!queued(first)) return first as AcquireResult;
        // Still in line: wait on the place it already has (acquire is idempotent per lease id).
        return await Promise.race([this.stub.acquire({ ...req, waitMs: waitMs() }) as Promise<AcquireResult>, timeout]);
      } catch (err) {
        if (err instanceof LimiterUnavailable) throw err;
        const flags = (err ?? {}) as Flags;
        if (flags.overloaded) throw new LimiterUnavailable(1_000, "the limiter is overloaded");
        if (!flags.retryable || this.now() + RETRY_PAUSE_MS >= deadline) throw new LimiterUnavailable(1_000, "the limiter could not be reached");
        await sleep(RETRY_PAUSE_MS);
        this.stub = this.fresh();
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    }
  }

  /** A new stub (a broken one stays broken); the hint only matters when the object is first created. */
  private fresh(): DurableObjectStub<Limiter> {
    return this.ns.get(this.id, this.location ? { locationHint: this.location } : undefined);
  }

  settle(leaseId: string, outcome: SettleRequest): void {
    this.channel.post({ t: "settle", id: leaseId, outcome }, this.carrier);
  }

  /** Settles and waits for it: used before a retry, so the shared gate is shut before anyone else goes. */
  async settleNow(leaseId: string, outcome: SettleRequest): Promise<SettleAnswer | undefined> {
    const answer = (r: unknown) => (typeof r === "object" && r !== null && "retry" in r ? (r as SettleAnswer) : undefined);
    try {
      return answer(await this.channel.call({ t: "settle", id: leaseId, outcome }, this.carrier));
    } catch {
      this.stub = this.fresh();
      return answer(await this.stub.settle(leaseId, outcome).catch(() => undefined));
    }
  }

  release(leaseId: string, usage?: UsageRecord): void {
    this.channel.post(usage ? { t: "release", id: leaseId, usage } : { t: "release", id: leaseId }, this.carrier);
  }

  cancel(leaseId: string): void {
    this.channel.post({ t: "cancel", id: leaseId }, this.carrier, true);
  }

  /**
   * Keeps a held lease alive while the provider is slow or the stream long. Returns the stopper.
   * The renewal carries the lease's cost: an object that lost the lease (a restart before it was
   * written) takes it back, rather than admitting past it while it runs.
   */
  keepAlive(leaseId: string, ttlMs: number, cost?: number): () => void {
    const timer = setInterval(() => this.channel.post({ t: "renew", id: leaseId, cost }, this.carrier), renewEvery(ttlMs));
    return () => clearInterval(timer);
  }
}
