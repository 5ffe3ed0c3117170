import { renewEvery } from "../limiter/core";
import type { Limiter } from "../limiter/object";
import type { AcquireRequest, AcquireResult, SettleRequest } from "../limiter/types";

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
  settleNow(leaseId: string, outcome: SettleRequest): Promise<void>;
  release(leaseId: string): void;
  cancel(leaseId: string): void;
  keepAlive(leaseId: string, ttlMs: number): () => void;
}

/**
 * The Worker's side of one key's Limiter. Acquire retries a broken object with a fresh stub
 * (the object may have restarted); the other calls are fire-and-forget, kept alive by waitUntil.
 */
export class LimiterClient implements LimiterCalls {
  private stub: DurableObjectStub<Limiter>;
  private id: DurableObjectId;

  private ns: DurableObjectNamespace<Limiter>;
  private waitUntil: (p: Promise<unknown>) => void;
  private now: () => number;

  constructor(ns: DurableObjectNamespace<Limiter>, key: string, waitUntil: (p: Promise<unknown>) => void, now: () => number = Date.now) {
    this.ns = ns;
    this.waitUntil = waitUntil;
    this.now = now;
    this.id = ns.idFromName(key);
    this.stub = ns.get(this.id);
  }

  async acquire(req: Omit<AcquireRequest, "waitMs">, deadline: number): Promise<AcquireResult> {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LimiterUnavailable(1_000, "the limiter did not answer in time")), Math.max(0, deadline - this.now()) + GRACE_MS);
      });
      try {
        const call = this.stub.acquire({ ...req, waitMs: Math.max(0, deadline - this.now()) }) as Promise<AcquireResult>;
        return await Promise.race([call, timeout]);
      } catch (err) {
        if (err instanceof LimiterUnavailable) throw err;
        const flags = (err ?? {}) as Flags;
        if (flags.overloaded) throw new LimiterUnavailable(1_000, "the limiter is overloaded");
        if (!flags.retryable || this.now() + RETRY_PAUSE_MS >= deadline) throw new LimiterUnavailable(1_000, "the limiter could not be reached");
        await sleep(RETRY_PAUSE_MS);
        this.stub = this.ns.get(this.id);
      } finally {
        if (timer !== undefined) clearTimeout(timer);
      }
    }
  }

  settle(leaseId: string, outcome: SettleRequest): void {
    this.background(() => this.stub.settle(leaseId, outcome));
  }

  /** Settles and waits for it: used before a retry, so the shared gate is shut before anyone else goes. */
  async settleNow(leaseId: string, outcome: SettleRequest): Promise<void> {
    try {
      await this.stub.settle(leaseId, outcome);
    } catch {
      this.stub = this.ns.get(this.id);
      await this.stub.settle(leaseId, outcome).catch(() => {});
    }
  }

  release(leaseId: string): void {
    this.background(() => this.stub.release(leaseId));
  }

  cancel(leaseId: string): void {
    this.background(() => this.stub.cancel(leaseId));
  }

  /** Keeps a held lease alive while the provider is slow or the stream long. Returns the stopper. */
  keepAlive(leaseId: string, ttlMs: number): () => void {
    const timer = setInterval(() => this.background(() => this.stub.renew(leaseId)), renewEvery(ttlMs));
    return () => clearInterval(timer);
  }

  /**
   * Settle, release, renew and cancel are idempotent, so a failed one is tried once more on a
   * fresh stub (the object may have restarted). One still lost is bounded by the lease's expiry;
   * it must never fail the request.
   */
  private background(call: () => Promise<unknown>): void {
    this.waitUntil(
      call().catch(async () => {
        this.stub = this.ns.get(this.id);
        await call().catch(() => {});
      }),
    );
  }
}
