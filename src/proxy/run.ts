import type { GatewayConfig } from "../config/limits";
import type { AcquireResult, KeyMeta, SettleAnswer, SettleRequest } from "../limiter/types";
import { decideRetry } from "../policy/backoff";
import { classify, keyUnusable } from "../policy/classify";
import { parseRateLimitHeaders } from "../policy/headers";
import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import { sleep } from "../sleep";
import type { Who } from "./caller";
import { gatewayError, retryAfterSeconds } from "./errors";
import { answerInit, BUFFER_MAX, ERROR_BODY_MAX, isEventStream, isStreamed, readCapped, readUpTo, streamBack } from "./answer";
import { AttemptTimer } from "./attempt-timer";
import { callerHeaders, parseJson } from "./forward";
import { type LimiterCalls, LimiterUnavailable } from "./limiter-client";
import { hideMember, noMember, withRetryAfter } from "./pooled";
import { stampPacing } from "./pacing";
import type { Meter } from "../usage/meter";
import type { Tags } from "../usage/types";
import type { Route, Target } from "./target";

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
  /** A pool's members (a virtual key): each attempt goes to the one that can start it soonest. */
  route?: Route;
  /** Stops the request while it waits, never mid-attempt (its virtual key was revoked). */
  stop?: AbortSignal;
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
/** `limiter`: the key's; null only with `plan.route`, whose members bring their own. */
export async function run(plan: Plan, limiter: LimiterCalls | null, deps: Deps): Promise<Response> {
  const pause = deps.sleep ?? sleep;
  const requestId = crypto.randomUUID();
  const route = plan.route;
  // While it waits (queued or between attempts), a request also stops for `plan.stop`; an attempt
  // under way runs to its answer.
  const waiting = plan.stop ? AbortSignal.any([plan.signal, plan.stop]) : plan.signal;
  let target: Target | undefined = route ? undefined : { url: plan.url, headers: plan.headers, key: plan.key, limiter: limiter! };
  let avoid: Target | undefined;
  let asks = 0;
  let attempts = 0;
  let queueMs = 0;
  let last: Response | null = null;
  let grant: AcquireResult | undefined;
  /** A request takes at most one member out (see below). */
  let tookOut = false;
  const stamp = (res: Response) => {
    if (route) hideMember(res.headers);
    stampPacing(res, grant);
    res.headers.set("x-slotgate-key", (target?.key ?? plan.key).key);
    res.headers.set("x-slotgate-attempts", String(attempts));
    res.headers.set("x-slotgate-queue-ms", String(Math.round(queueMs)));
    return res;
  };

  for (;;) {
    // An abort listener never fires on a signal already aborted: a caller gone during a pause stops here.
    if (waiting.aborted) return GONE();
    if (!target) {
      const to = route!.pick(deps.now(), avoid);
      avoid = undefined;
      if ("backAt" in to) {
        // Every member is out: wait for the first back if the deadline allows, else say when.
        const waitMs = to.backAt - deps.now();
        if (to.backAt > plan.deadline) return stamp(withRetryAfter(last ?? noMember(route!.pool, waitMs), waitMs));
        await pause(waitMs, waiting);
        continue;
      }
      target = to;
    }
    const at = target;
    const leaseId = `${requestId}:${++asks}`;
    const asked = deps.now();
    const leave = () => at.limiter.cancel(leaseId);
    waiting.addEventListener("abort", leave);
    try {
      grant = await at.limiter.acquire({ ...at.key, ...plan.who, leaseId, cost: plan.cost, retry: attempts > 0, ...(route && { pooled: true }) }, plan.deadline);
    } catch (err) {
      if (!(err instanceof LimiterUnavailable)) throw err;
      // The object may have granted it after all: never leave that slot to its lease's expiry.
      at.limiter.cancel(leaseId);
      return stamp(last ?? gatewayError("limiter_unavailable", err.message, { "retry-after": retryAfterSeconds(err.retryAfterMs) }));
    } finally {
      waiting.removeEventListener("abort", leave);
    }
    queueMs += deps.now() - asked;
    route?.heard(at, grant.view, deps.now());
    if (waiting.aborted) {
      if (grant.granted) at.limiter.release(leaseId);
      return GONE();
    }
    if (!grant.granted) {
      // Out of its pool (the view said otherwise): another member, at no cost to the attempts.
      if (route && grant.reason === "out") {
        target = undefined;
        continue;
      }
      return stamp(last ?? gatewayError("queue_timeout", "no slot became free before the request's deadline", { "retry-after": retryAfterSeconds(grant.retryAfterMs) }));
    }

    const attempt = ++attempts;
    const timer = new AttemptTimer(plan.signal, plan.gateway.upstreamTimeoutMs, plan.gateway.streamIdleMs);
    const renewing = at.limiter.keepAlive(leaseId, grant.leaseTtlMs, plan.cost);
    const stopRenewing = () => {
      renewing();
      timer.stop();
    };
    const pooled = route ? { pooled: true } : {};
    const sent = deps.now();
    /** The attempt never got a whole answer: settle it as transient, and retry if policy says so. */
    const unreachable = async (): Promise<Response | null> => {
      stopRenewing();
      // The caller left: not the provider's fault, so the slot just goes back.
      if (plan.signal.aborted && !timer.timedOut) {
        at.limiter.release(leaseId);
        return GONE();
      }
      const d = decide("transient", attempt, null, plan, deps);
      const word = await at.limiter.settleNow(leaseId, { ...outcome("transient", 0, NO_INFO, deps.now() - sent, attempt, !d.retry), ...pooled });
      const why = timer.timedOut ? "the provider did not answer in time" : "the provider could not be reached";
      if (!d.retry) return stamp(last ?? gatewayError("upstream_unreachable", why));
      await pause(pauseFor(d.delayMs, word), waiting);
      return null;
    };
    let res: Response;
    try {
      res = await deps.fetch(at.url, { method: plan.method, headers: at.headers, body: plan.body, signal: timer.signal, redirect: "manual" });
    } catch {
      const answer = await unreachable();
      if (answer) return answer;
      continue;
    }
    const latency = deps.now() - sent;
    timer.answered();

    if (res.status < 400) {
      route?.answered(at);
      const info = parseRateLimitHeaders(res.headers, deps.now());
      const streaming = isStreamed(res.headers, plan.stream);
      const success = { ...outcome("success", res.status, info, latency, attempt, true), ...pooled };
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
          at.limiter.settle(leaseId, { ...success, release: true, streaming: false, usage: plan.meter?.plain(read.whole, plan.tags) });
          return stamp(new Response(read.whole, answerInit(res)));
        }
        body = read.rest;
      }
      at.limiter.settle(leaseId, { ...success, release: false, streaming });
      const tap = plan.meter?.stream(body, isEventStream(res.headers), plan.tags);
      return stamp(streamBack(tap ? tap.body : body, answerInit(res), plan.waitUntil, () => {
        stopRenewing();
        at.limiter.release(leaseId, tap?.record());
      }));
    }

    // An error body is small and needed twice: to classify it, and to hand it back unchanged.
    const bytes = await readCapped(res.body && timer.watch(res.body), ERROR_BODY_MAX).catch(() => new Uint8Array(0));
    stopRenewing();
    const body = parseJson(bytes) ?? new TextDecoder().decode(bytes);
    const info = parseRateLimitHeaders(res.headers, deps.now(), body);
    const cls = classify(res.status, body);
    let d = decide(cls, attempt, info.retryAfterMs, plan, deps);
    // In a pool, a member whose key cannot be used goes out, and the request goes on to another.
    // Once: an answer that would take a second member out for the same request says more about
    // what the request asks than about the keys, so it is the caller's answer, and it may only
    // keep out a member already out (a failed probe), never take one out.
    const evidence = route ? (keyUnusable(res.status, body) ?? undefined) : undefined;
    const out = tookOut ? undefined : evidence;
    let move = false;
    if (out) {
      tookOut = true;
      d = attempt < plan.maxAttempts && deps.now() < plan.deadline ? { retry: true, delayMs: 0 } : { retry: false, reason: "attempts_exhausted" };
      move = true;
    } else if (route && d.retry) {
      const elsewhere = route.waitElsewhere(at, deps.now());
      move = elsewhere !== null && elsewhere < d.delayMs;
    }
    // A refused request that will be back here keeps its claim on the refill it waits for.
    const next = cls === "rate_limit" && d.retry && !move ? `${requestId}:${asks + 1}` : undefined;
    const settled = {
      ...outcome(cls, res.status, info, latency, attempt, !d.retry), next, ...pooled,
      ...(evidence && { out: evidence, outMs: route!.outMs, ...(!out && { confirmOnly: true }) }),
    };
    const word = await at.limiter.settleNow(leaseId, settled);
    if (out) route!.out(at, out, deps.now());
    else if (!evidence) route?.answered(at);
    last = new Response(route ? route.scrub(bytes) : bytes, { status: res.status, statusText: res.statusText, headers: callerHeaders(res.headers) });
    if (!d.retry) return stamp(last);
    if (move) {
      // The other member's own line decides when it goes: no pause here.
      target = undefined;
      avoid = at;
      continue;
    }
    await pause(pauseFor(d.delayMs, word), waiting);
    if (waiting.aborted) {
      if (next) at.limiter.cancel(next);
      return GONE();
    }
  }
}

/** The limiter places a retry it says may come now (limiter/outcomes.ts, retryWord): no pause of the Worker's own. */
const pauseFor = (delayMs: number, word: SettleAnswer | undefined) => (word?.retry === "now" ? 0 : delayMs);

function decide(cls: OutcomeClass, attempt: number, hintMs: number | null, plan: Plan, deps: Deps) {
  return decideRetry({
    cls, attempt, hintMs, maxAttempts: plan.maxAttempts, now: deps.now(), deadline: plan.deadline,
    baseMs: plan.gateway.baseBackoffMs, maxMs: plan.gateway.maxBackoffMs, random: deps.random,
  });
}

function outcome(cls: OutcomeClass, status: number, info: RateLimitInfo, latencyMs: number, attempt: number, final: boolean): SettleRequest {
  return { cls, status, info, latencyMs, attempt, final, release: true };
}
