import type { LimiterConfig } from "../config/limits";
import { type CacheShare, charged, noShare, observe } from "../limiter/cache-share";
import { LimiterCore, type Outcome } from "../limiter/core";
import { LimiterDriver } from "../limiter/driver";
import type { AcquireResult } from "../limiter/types";

export interface LocalAcquire {
  leaseId: string;
  cost: number;
  /** Its output allowance, where the line's dialect limits generated tokens apart (then `cost` is the prompt's). */
  out?: number;
  /** A retry rejoins at the head of the queue. */
  retry: boolean;
  /** Epoch ms: past it, the waiter is turned away with queue_timeout. */
  deadline: number;
}

/**
 * The Durable Object's job, in process: one LimiterCore per key driven by the same LimiterDriver
 * as the object. Nothing is persisted and leases never expire: the batch runner always releases
 * in `finally`.
 */
export class LocalLimiter {
  readonly core: LimiterCore;
  private driver: LimiterDriver;
  private now: () => number;
  /** Where the key's window leaves prompt-cache reads out: the share its answers show read, as the object keeps (limiter/calls.ts). */
  private share: CacheShare | null;

  constructor(config: LimiterConfig, now: () => number = Date.now, cacheReadsFree = false) {
    this.core = new LimiterCore(config);
    this.driver = new LimiterDriver(this.core, now);
    this.now = now;
    this.share = cacheReadsFree ? noShare() : null;
  }

  acquire(req: LocalAcquire): Promise<AcquireResult> {
    const cost = this.share ? charged(this.share, req.cost, this.now()) : req.cost;
    return this.driver.acquire({ id: req.leaseId, cost, out: req.out, retry: req.retry, deadline: req.deadline });
  }

  /** An answer's prompt tokens, `cached` of them read from the provider's cache. */
  answered(input: number, cached: number): void {
    if (this.share) observe(this.share, input, cached, this.now());
  }

  /** Feeds one attempt's outcome to the core and, by default, frees its slot in the same step. */
  settle(leaseId: string, outcome: Outcome, release = true): void {
    this.driver.settle(leaseId, { ...outcome, release });
  }

  release(leaseId: string): void {
    this.driver.release(leaseId);
  }

  /** A waiter that gave up (Ctrl-C): out of the queue, or its slot back if it was just granted. */
  cancel(leaseId: string): void {
    this.driver.cancel(leaseId);
  }

  get queued(): number {
    return this.core.queue.size;
  }

  get inFlight(): number {
    return this.core.inFlight;
  }

  /** Turns every waiter away and stops the timer, so the process can exit. */
  close(): void {
    this.driver.close();
  }
}

/** One limiter per key (`<provider>:<model>`: the credential is fixed per provider in a run), like one object per key. */
export class LocalLimiters {
  private byKey = new Map<string, LocalLimiter>();
  private config: LimiterConfig;
  private now: () => number;

  constructor(config: LimiterConfig, now: () => number = Date.now) {
    this.config = config;
    this.now = now;
  }

  /** `cacheReadsFree`: the key's provider row leaves prompt-cache reads out of its window (read once, with the key). */
  for(key: string, cacheReadsFree = false): LocalLimiter {
    let l = this.byKey.get(key);
    if (!l) this.byKey.set(key, (l = new LocalLimiter(this.config, this.now, cacheReadsFree)));
    return l;
  }

  get queued(): number {
    let n = 0;
    for (const l of this.byKey.values()) n += l.queued;
    return n;
  }

  close(): void {
    for (const l of this.byKey.values()) l.close();
  }
}
