// The gateway on the virtual clock: the real retry loop (src/proxy/run.ts) and the real limiter
// (LimiterCore driven by Waiters, as the Durable Object drives it), with a delay on every call
// between the Worker and the object.
import { DEFAULT_GATEWAY, DEFAULT_LIMITER, type LimiterConfig } from "../src/config/limits";
import { LimiterCore } from "../src/limiter/core";
import type { AcquireRequest, AcquireResult, SettleRequest } from "../src/limiter/types";
import { LimiterDriver } from "../src/limiter/driver";
import { estimateTokens } from "../src/policy/estimate";
import type { Who } from "../src/proxy/caller";
import type { LimiterCalls } from "../src/proxy/limiter-client";
import { run } from "../src/proxy/run";
import type { Clock } from "./clock.ts";
import type { SimProvider } from "./provider.ts";

/** One-way time of a call from the Worker to the key's object (same region). */
export const RPC_MS = 5;

const KEY = { key: "sim:model:0000000000000000", provider: "sim", model: "model" };

export class SimObject {
  readonly core: LimiterCore;
  /** The object's own driver: what the Durable Object does with each call, on the virtual clock. */
  readonly driver: LimiterDriver;
  /** Calls into the object, as the hot path would pay them. */
  calls = 0;

  constructor(clock: Clock, config: Partial<LimiterConfig> = {}) {
    this.core = new LimiterCore({ ...DEFAULT_LIMITER, ...config });
    this.driver = new LimiterDriver(this.core, () => clock.now, {}, clock.timers);
  }
}

/** The Worker's side: the same calls LimiterClient makes, each a round trip of 2 x rpcMs. */
export class SimLimiter implements LimiterCalls {
  constructor(private clock: Clock, private obj: SimObject, private rpcMs: number) {}

  /** One call into the object: a leg there, the object's work, a leg back. */
  private async call<T>(work: (d: LimiterDriver) => T | Promise<T>): Promise<T> {
    await this.clock.sleep(this.rpcMs);
    this.obj.calls++;
    const r = await work(this.obj.driver);
    await this.clock.sleep(this.rpcMs);
    return r;
  }

  acquire(req: Omit<AcquireRequest, "waitMs">, deadline: number): Promise<AcquireResult> {
    return this.call((d) => d.acquire({ id: req.leaseId, cost: req.cost, retry: req.retry, deadline, caller: req.caller, lane: req.priority, pooled: req.pooled }));
  }

  settle(leaseId: string, outcome: SettleRequest): void {
    void this.settleNow(leaseId, outcome);
  }

  async settleNow(leaseId: string, outcome: SettleRequest): Promise<void> {
    await this.call((d) => d.settle(leaseId, outcome));
  }

  release(leaseId: string): void {
    void this.call((d) => d.release(leaseId));
  }

  cancel(leaseId: string): void {
    void this.call((d) => d.cancel(leaseId));
  }

  keepAlive(): () => void {
    return () => {};
  }
}

export interface SimRequest {
  body: Uint8Array;
  json: unknown;
}

/** One caller request through the gateway, as routes/proxy.ts builds its plan; `who` as its headers name it. */
export function gatewaySender(clock: Clock, provider: SimProvider, obj: SimObject, random: () => number, rpcMs = RPC_MS, who?: Who, workerMs = 0) {
  const limiter = new SimLimiter(clock, obj, rpcMs);
  // The Worker's own time per attempt, half before the send and half after the answer: the slot is held throughout.
  const upstream = workerMs > 0
    ? async (input: RequestInfo | URL, init?: RequestInit) => {
      await clock.sleep(workerMs / 2);
      const res = await provider.fetch(input as string, init);
      await clock.sleep(workerMs / 2);
      return res;
    }
    : provider.fetch;
  const deps = { fetch: upstream as typeof fetch, now: () => clock.now, random, sleep: (ms: number) => clock.sleep(ms) };
  return async (req: SimRequest): Promise<Response> => {
    const plan = {
      url: new URL("https://provider.invalid/v1/chat/completions"),
      method: "POST",
      headers: new Headers({ "content-type": "application/json", authorization: "Bearer sk-sim" }),
      body: req.body,
      key: KEY,
      who,
      cost: estimateTokens(req.json, req.body.byteLength),
      deadline: clock.now + DEFAULT_GATEWAY.deadlineMs,
      maxAttempts: DEFAULT_GATEWAY.maxAttempts,
      gateway: DEFAULT_GATEWAY,
      signal: new AbortController().signal,
      waitUntil: () => {},
    };
    return run(plan, limiter, deps);
  };
}
