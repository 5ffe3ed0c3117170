// The gateway on the virtual clock: the real retry loop (src/proxy/run.ts) and the real limiter
// (LimiterCore driven by Waiters, as the Durable Object drives it), with a delay on every call
// between the Worker and the object.
import { DEFAULT_GATEWAY, DEFAULT_LIMITER, type LimiterConfig } from "../src/config/limits";
import { LimiterCore } from "../src/limiter/core";
import type { Dialect } from "../src/providers/dialect";
import { DIALECTS, type DialectName as RowName } from "../src/providers/dialects";
import type { DialectName } from "../test/support/standin/dialect.ts";
import type { AcquireRequest, AcquireResult, SettleAnswer, SettleRequest } from "../src/limiter/types";
import { type DriverHooks, LimiterDriver } from "../src/limiter/driver";
import { estimateTokens } from "../src/policy/estimate";
import type { Who } from "../src/proxy/caller";
import type { LimiterCalls } from "../src/proxy/limiter-client";
import { run } from "../src/proxy/run";
import type { Clock } from "./clock.ts";
import type { Machine } from "./machine.ts";
import type { SimProvider } from "./provider.ts";
import { requestNumber, type Trace } from "./trace.ts";

/** One-way time of a call from the Worker to the key's object (same region). */
export const RPC_MS = 5;

const KEY = { key: "sim:model:0000000000000000", provider: "sim", model: "model" };

export class SimObject {
  readonly core: LimiterCore;
  /** The object's own driver: what the Durable Object does with each call, on the virtual clock. */
  readonly driver: LimiterDriver;
  /** Calls into the object, as the hot path would pay them. */
  calls = 0;

  constructor(clock: Clock, config: Partial<LimiterConfig> = {}, trace?: Trace) {
    this.core = new LimiterCore({ ...DEFAULT_LIMITER, ...config });
    const settled: DriverHooks["settled"] = (id, o, now, apply) => {
      const changed = apply();
      trace?.settled(id, o, now, this.core.aimd.limit);
      return changed;
    };
    const hooks: DriverHooks = trace ? { settled } : {};
    this.driver = new LimiterDriver(this.core, () => clock.now, hooks, clock.timers);
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

  async settleNow(leaseId: string, outcome: SettleRequest): Promise<SettleAnswer> {
    return (await this.call((d) => d.settle(leaseId, outcome))).answer;
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

export interface SenderOptions {
  /** One-way time of a call to the object (default RPC_MS). */
  rpcMs?: number;
  /** Who the requests come from, as their headers name it. */
  who?: Who;
  /** The Worker's own time per attempt, half before the send and half after the answer: the slot is held throughout. */
  workerMs?: number;
  /** Records each attempt's timeline (sim/trace.ts). */
  trace?: Trace;
  /** The gateway's thread, shared by every request and attempt (sim/machine.ts). */
  machine?: Machine;
  /** What the provider's answers mean to the gateway (its dialect row); absent: every family. */
  dialect?: Dialect;
}

/** The gateway's row for a stand-in dialect: Gemini's OpenAI-compatible route is the gemini row's too. */
export const gatewayDialect = (name: DialectName): Dialect => DIALECTS[(name === "gemini-openai" ? "gemini" : name) as RowName];

/** A traced request's calls to the object: each acquire is noted with the request it belongs to. */
function traced(limiter: SimLimiter, obj: SimObject, trace: Trace, request: number, clock: Clock): LimiterCalls {
  return {
    acquire: async (req, deadline) => {
      trace.asked(request, req.leaseId, clock.now);
      const r = await limiter.acquire(req, deadline);
      trace.granted(req.leaseId, r, clock.now, obj.core.inFlight);
      return r;
    },
    settle: (id, o) => limiter.settle(id, o),
    settleNow: (id, o) => limiter.settleNow(id, o),
    release: (id) => limiter.release(id),
    cancel: (id) => limiter.cancel(id),
    keepAlive: () => limiter.keepAlive(),
  };
}

/** One caller request through the gateway, as routes/proxy.ts builds its plan. */
export function gatewaySender(clock: Clock, provider: SimProvider, obj: SimObject, random: () => number, o: SenderOptions = {}) {
  const limiter = new SimLimiter(clock, obj, o.rpcMs ?? RPC_MS);
  const { workerMs = 0, trace, machine } = o;
  const upstream = (request: number) => async (input: RequestInfo | URL, init?: RequestInit) => {
    if (workerMs > 0) await clock.sleep(workerMs / 2);
    await machine?.work(0.5);
    trace?.sent(request, clock.now);
    const res = await provider.fetch(input as string, init);
    trace?.answered(request, res, clock.now);
    await machine?.work(0.5);
    if (workerMs > 0) await clock.sleep(workerMs / 2);
    return res;
  };
  return async (req: SimRequest): Promise<Response> => {
    const n = requestNumber(req.json);
    await machine?.work(1);
    const deps = { fetch: upstream(n) as typeof fetch, now: () => clock.now, random, sleep: (ms: number) => clock.sleep(ms) };
    const plan = {
      url: new URL("https://provider.invalid/v1/chat/completions"),
      method: "POST",
      headers: new Headers({ "content-type": "application/json", authorization: "Bearer sk-sim" }),
      body: req.body,
      key: KEY,
      dialect: o.dialect,
      who: o.who,
      cost: estimateTokens(req.json, req.body.byteLength),
      deadline: clock.now + DEFAULT_GATEWAY.deadlineMs,
      maxAttempts: DEFAULT_GATEWAY.maxAttempts,
      gateway: DEFAULT_GATEWAY,
      signal: new AbortController().signal,
      waitUntil: () => {},
    };
    return run(plan, trace ? traced(limiter, obj, trace, n, clock) : limiter, deps);
  };
}
