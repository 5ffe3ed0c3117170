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
import { estimate } from "../src/policy/estimate";
import type { Who } from "../src/proxy/caller";
import type { LimiterCalls } from "../src/proxy/limiter-client";
import { run } from "../src/proxy/run";
import { HeldTickets } from "../src/limiter/tickets/isolate";
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
  /** Calls into the object, as the hot path would pay them; attempts that went on a ticket, with none. */
  calls = 0;
  ticketed = 0;

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

/**
 * One Worker isolate's side: the same calls LimiterClient makes, each a round trip of 2 x rpcMs
 * (no batching). With `tickets`, each call asks for tickets as the isolate's channel does, and a
 * first attempt that finds one goes with no call, its use and later ops following as calls.
 */
export class SimLimiter implements LimiterCalls {
  private held = new HeldTickets();
  private ticketOf = new Map<string, string>();

  constructor(private clock: Clock, private obj: SimObject, private rpcMs: number, private tickets = false) {}

  /** One call into the object: a leg there, the object's work (and tickets, if asked), a leg back. */
  private async call<T>(work: (d: LimiterDriver) => T | Promise<T>): Promise<T> {
    const sentAt = this.clock.now;
    const ask = this.tickets ? this.held.ask(sentAt) : undefined;
    for (const id of this.tickets ? this.held.expired(sentAt) : []) void this.call((d) => d.release(id));
    await this.clock.sleep(this.rpcMs);
    this.obj.calls++;
    const d = this.obj.driver;
    const pending = work(d);
    const ids = ask ? d.issue(ask) : [];
    const epoch = d.core.epoch;
    const r = await pending;
    await this.clock.sleep(this.rpcMs);
    if (this.tickets) {
      const tickets = ids.length > 0 ? { ids, cost: ask!.cost, ...(ask!.out !== undefined && { out: ask!.out }), leaseTtlMs: d.core.config.leaseTtlMs, ...d.core.pacing() } : undefined;
      for (const id of this.held.heard({ epoch, tickets }, sentAt)) void this.call((x) => x.release(id));
    }
    return r;
  }

  acquire(req: Omit<AcquireRequest, "waitMs">, deadline: number): Promise<AcquireResult> {
    const t = this.tickets && !req.retry && !req.pooled ? this.held.take(req.cost, this.clock.now, req.out) : null;
    if (t) {
      this.obj.ticketed++;
      this.ticketOf.set(req.leaseId, t.id);
      void this.call((d) => d.exchange([{ t: "use", id: t.id, cost: req.cost, ...(req.out !== undefined && { out: req.out }), caller: req.caller, priority: req.priority }]));
      const { id: _id, ...grant } = t;
      return Promise.resolve({ granted: true, leaseId: req.leaseId, waitedMs: 0, ...grant });
    }
    return this.call((d) => d.acquire({ id: req.leaseId, cost: req.cost, out: req.out, retry: req.retry, deadline, caller: req.caller, lane: req.priority, pooled: req.pooled, tier: req.tier }));
  }

  settle(leaseId: string, outcome: SettleRequest): void {
    void this.settleNow(leaseId, outcome);
  }

  async settleNow(leaseId: string, outcome: SettleRequest): Promise<SettleAnswer> {
    const id = this.ticketOf.get(leaseId) ?? leaseId;
    return (await this.call((d) => d.settle(id, outcome))).answer;
  }

  release(leaseId: string): void {
    const id = this.ticketOf.get(leaseId) ?? leaseId;
    void this.call((d) => d.release(id));
  }

  cancel(leaseId: string): void {
    const id = this.ticketOf.get(leaseId) ?? leaseId;
    void this.call((d) => d.cancel(id));
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
  /** Worker isolates the requests are spread over, round robin (default 1), and whether they take tickets (default: yes, as the gateway does). */
  isolates?: number;
  tickets?: boolean;
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
  const limiters = Array.from({ length: Math.max(1, o.isolates ?? 1) }, () => new SimLimiter(clock, obj, o.rpcMs ?? RPC_MS, o.tickets ?? true));
  let turn = 0;
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
    const limiter = limiters[turn++ % limiters.length]!;
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
      // As proxy/request.ts: the whole estimate and its output allowance (each attempt splits them by its row).
      ...estimate(req.json, req.body.byteLength),
      deadline: clock.now + DEFAULT_GATEWAY.deadlineMs,
      maxAttempts: DEFAULT_GATEWAY.maxAttempts,
      gateway: DEFAULT_GATEWAY,
      signal: new AbortController().signal,
      waitUntil: () => {},
    };
    return run(plan, trace ? traced(limiter, obj, trace, n, clock) : limiter, deps);
  };
}
