import type { GatewayConfig } from "../config/limits";
import type { AcquireResult, KeyMeta, SettleRequest } from "../limiter/types";
import { decideRetry } from "../policy/backoff";
import { classify } from "../policy/classify";
import { parseRateLimitHeaders } from "../policy/headers";
import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import { sleep } from "../sleep";
import type { Who } from "./caller";
import { gatewayError, retryAfterSeconds } from "./errors";
import { answerInit, BUFFER_MAX, ERROR_BODY_MAX, isEventStream, isStreamed, readCapped, readUpTo, streamBack } from "./answer";
import { AttemptTimer } from "./attempt-timer";
import { callerHeaders, parseJson } from "./forward";
import { type LimiterCalls, LimiterUnavailable } from "./limiter-client";
import { stampPacing } from "./pacing";
import type { Meter } from "../usage/meter";
import type { Tags } from "../usage/types";

/** One caller request, resolved and read, ready to be sent as many times as policy allows. */
export interface Plan {
  url: URL;
  method: string;
  headers: Headers;
  body: Uint8Array | null;
  key: KeyMeta;
  /** Who asks, for the key's fair shares; absent: the key's default caller. */
  who?: Who;
  cost: number;
  /** The caller asked for a streamed answer: pass it through as it comes, whatever its type. */
  stream?: boolean;
  deadline: number;
  maxAttempts: number;
  gateway: GatewayConfig;
  signal: AbortSignal;
  waitUntil: (p: Promise<unknown>) => void;
  /** Who the answer's usage is counted under in the ledger, besides its key and model. */
  tags?: Tags;
  /** Reads each answer's usage for the ledger; absent: nothing is counted. */
  meter?: Meter;
}

export interface Deps {
  fetch: typeof fetch;
  now: () => number;
  random: () => number;
  /** Defaults to real time; the simulator passes its virtual clock's. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const NO_INFO: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };
/** The caller is gone; the status is never seen, but the runtime wants a Response. */
const GONE = () => new Response(null, { status: 499 });

/**
 * Acquire, send, settle, and retry what policy says to retry, until an answer the caller should
 * see. The slot of a successful attempt is held until its body has been streamed out.
 */
export async function run(plan: Plan, limiter: LimiterCalls, deps: Deps): Promise<Response> {
  const pause = deps.sleep ?? sleep;
  const requestId = crypto.randomUUID();
  let attempts = 0;
  let queueMs = 0;
  let last: Response | null = null;
  let grant: AcquireResult | undefined;
  const stamp = (res: Response) => {
    stampPacing(res, grant);
    res.headers.set("x-slotgate-key", plan.key.key);
    res.headers.set("x-slotgate-attempts", String(attempts));
    res.headers.set("x-slotgate-queue-ms", String(Math.round(queueMs)));
    return res;
  };

  for (let attempt = 1; ; attempt++) {
    // An abort listener never fires on a signal already aborted: a caller gone during a pause stops here.
    if (plan.signal.aborted) return GONE();
    const leaseId = `${requestId}:${attempt}`;
    const asked = deps.now();
    const leave = () => limiter.cancel(leaseId);
    plan.signal.addEventListener("abort", leave);
    try {
      grant = await limiter.acquire({ ...plan.key, ...plan.who, leaseId, cost: plan.cost, retry: attempt > 1 }, plan.deadline);
    } catch (err) {
      if (!(err instanceof LimiterUnavailable)) throw err;
      // The object may have granted it after all: never leave that slot to its lease's expiry.
      limiter.cancel(leaseId);
      return stamp(last ?? gatewayError("limiter_unavailable", err.message, { "retry-after": retryAfterSeconds(err.retryAfterMs) }));
    } finally {
      plan.signal.removeEventListener("abort", leave);
    }
    queueMs += deps.now() - asked;
    if (plan.signal.aborted) {
      if (grant.granted) limiter.release(leaseId);
      return GONE();
    }
    if (!grant.granted)
      return stamp(last ?? gatewayError("queue_timeout", "no slot became free before the request's deadline", { "retry-after": retryAfterSeconds(grant.retryAfterMs) }));

    attempts = attempt;
    const timer = new AttemptTimer(plan.signal, plan.gateway.upstreamTimeoutMs, plan.gateway.streamIdleMs);
    const renewing = limiter.keepAlive(leaseId, grant.leaseTtlMs, plan.cost);
    const stopRenewing = () => {
      renewing();
      timer.stop();
    };
    const sent = deps.now();
    /** The attempt never got a whole answer: settle it as transient, and retry if policy says so. */
    const unreachable = async (): Promise<Response | null> => {
      stopRenewing();
      // The caller left: not the provider's fault, so the slot just goes back.
      if (plan.signal.aborted && !timer.timedOut) {
        limiter.release(leaseId);
        return GONE();
      }
      const d = decide("transient", attempt, null, plan, deps);
      await limiter.settleNow(leaseId, outcome("transient", 0, NO_INFO, deps.now() - sent, attempt, !d.retry));
      const why = timer.timedOut ? "the provider did not answer in time" : "the provider could not be reached";
      if (!d.retry) return stamp(last ?? gatewayError("upstream_unreachable", why));
      await pause(d.delayMs, plan.signal);
      return null;
    };
    let res: Response;
    try {
      res = await deps.fetch(plan.url, { method: plan.method, headers: plan.headers, body: plan.body, signal: timer.signal, redirect: "manual" });
    } catch {
      const answer = await unreachable();
      if (answer) return answer;
      continue;
    }
    const latency = deps.now() - sent;
    timer.answered();

    if (res.status < 400) {
      const info = parseRateLimitHeaders(res.headers, deps.now());
      const streaming = isStreamed(res.headers, plan.stream);
      const success = outcome("success", res.status, info, latency, attempt, true);
      let body = res.body && timer.watch(res.body);
      if (!streaming && body) {
        // A plain answer is read whole first: its settle and its release are then one call.
        let read;
        try {
          read = await readUpTo(body, BUFFER_MAX);
        } catch {
          const answer = await unreachable();
          if (answer) return answer;
          continue;
        }
        if ("whole" in read) {
          stopRenewing();
          limiter.settle(leaseId, { ...success, release: true, streaming: false, usage: plan.meter?.plain(read.whole, plan.tags) });
          return stamp(new Response(read.whole, answerInit(res)));
        }
        body = read.rest;
      }
      limiter.settle(leaseId, { ...success, release: false, streaming });
      const tap = plan.meter?.stream(body, isEventStream(res.headers), plan.tags);
      return stamp(streamBack(tap ? tap.body : body, answerInit(res), plan.waitUntil, () => {
        stopRenewing();
        limiter.release(leaseId, tap?.record());
      }));
    }

    // An error body is small and needed twice: to classify it, and to hand it back unchanged.
    const bytes = await readCapped(res.body && timer.watch(res.body), ERROR_BODY_MAX).catch(() => new Uint8Array(0));
    stopRenewing();
    const body = parseJson(bytes) ?? new TextDecoder().decode(bytes);
    const info = parseRateLimitHeaders(res.headers, deps.now(), body);
    const cls = classify(res.status, body, res.statusText);
    const d = decide(cls, attempt, info.retryAfterMs, plan, deps);
    // A refused request that will be back keeps its claim on the refill it waits for.
    const next = cls === "rate_limit" && d.retry ? `${requestId}:${attempt + 1}` : undefined;
    await limiter.settleNow(leaseId, { ...outcome(cls, res.status, info, latency, attempt, !d.retry), next });
    last = new Response(bytes, { status: res.status, statusText: res.statusText, headers: callerHeaders(res.headers) });
    if (!d.retry) return stamp(last);
    await pause(d.delayMs, plan.signal);
    if (plan.signal.aborted) {
      if (next) limiter.cancel(next);
      return GONE();
    }
  }
}

function decide(cls: OutcomeClass, attempt: number, hintMs: number | null, plan: Plan, deps: Deps) {
  return decideRetry({
    cls, attempt, hintMs, maxAttempts: plan.maxAttempts, now: deps.now(), deadline: plan.deadline,
    baseMs: plan.gateway.baseBackoffMs, maxMs: plan.gateway.maxBackoffMs, random: deps.random,
  });
}

function outcome(cls: OutcomeClass, status: number, info: RateLimitInfo, latencyMs: number, attempt: number, final: boolean): SettleRequest {
  return { cls, status, info, latencyMs, attempt, final, release: true };
}
