// The steps of one attempt, in the order run.ts takes them: pick where it goes, hold a slot there,
// send, then settle what came back. Each answers with the caller's Response, AGAIN (go round:
// another member, a retry), or what the next step needs.
import { refusal, withErrorType } from "../policy/classify";
import { costFor } from "../policy/estimate";
import { parseRateLimitHeaders } from "../policy/limits";
import { answerInit, BUFFER_MAX, ERROR_BODY_MAX, isEventStream, isStreamed, readCapped, readUpTo, streamBack } from "./answer";
import { AGAIN, type Again, type Attempts, dialectOf, GONE, NO_INFO } from "./attempts";
import { AttemptTimer } from "./attempt-timer";
import { gatewayError, retryAfterSeconds } from "./errors";
import { callerHeaders, parseJson } from "./forward";
import { type LimiterCalls, LimiterUnavailable } from "./limiter-client";
import { noMember, withRetryAfter } from "./pooled";
import type { SettleAnswer } from "../limiter/types";
import type { Tier } from "../providers/dialect";
import { servedTier } from "../tiers/body";
import { tierBody } from "../tiers/plan";
import type { Slot } from "./slot";
import { attemptTier, onShed, stampTier, tierStep } from "./tier-step";
import type { Target } from "./target";
import { noMemberTakes, tooLargeAnswer, tooLargeAt } from "./too-large";
import { type Cause, unreachableMessage, whyUnreachable } from "./unreachable";

/** Where this attempt goes: the request's own key, or the pool member that can start it soonest. */
export async function pickTarget(s: Attempts): Promise<Target | Response | Again> {
  if (s.target) return s.target;
  const to = s.route!.pick(s.now(), s.avoid, s.tooSmall);
  s.avoid = undefined;
  if (to === null) return noMemberTakes(s);
  if (!("backAt" in to)) return (s.target = to);
  // Every member is out: wait for the first back if the deadline allows, else say when.
  const waitMs = to.backAt - s.now();
  if (to.backAt > s.plan.deadline) return s.stamp(withRetryAfter(s.last ?? noMember(s.route!.pool, waitMs), waitMs));
  await s.pause(waitMs);
  return AGAIN;
}

/** A slot at `at`'s limiter, or the answer when there is none before the deadline. */
export async function acquireSlot(s: Attempts, at: Target): Promise<Slot | Response | Again> {
  const { plan } = s;
  if (at.authorizer?.prepare) await at.authorizer.prepare();
  const leaseId = `${s.requestId}:${++s.asks}`;
  const asked = s.now();
  let { tier, key, limiter } = attemptTier(s, at);
  const span = plan.trace?.attempt(at, asked, s.route?.memberOf?.(at));
  // Charged as this key's row counts (a pool's members may count either way).
  const need = costFor(dialectOf(s, at), Math.min(plan.cost, s.capped ?? Infinity), plan.out, key.model);
  const leave = () => limiter.cancel(leaseId);
  s.waiting.addEventListener("abort", leave);
  try {
    // A tier other than standard is asked of the key's object, which says whether it has it shed.
    s.grant = await limiter.acquire({ ...key, ...plan.who, leaseId, ...need, retry: s.attempts > 0, ...(s.route && { pooled: true }), ...(tier !== "standard" && { tier }) }, plan.deadline);
  } catch (err) {
    if (!(err instanceof LimiterUnavailable)) throw err;
    // The object may have granted it after all: never leave that slot to its lease's expiry.
    limiter.cancel(leaseId);
    span?.close(s.now(), "limiter_unavailable");
    return s.stamp(s.last ?? gatewayError("limiter_unavailable", err.message, { "retry-after": retryAfterSeconds(err.retryAfterMs) }));
  } finally {
    s.waiting.removeEventListener("abort", leave);
  }
  const grant = s.grant;
  s.queueMs += s.now() - asked;
  s.route?.heard(at, grant.view, s.now());
  if (s.waiting.aborted) {
    span?.close(s.now(), "caller_left");
    if (grant.granted) limiter.release(leaseId);
    return GONE();
  }
  if (!grant.granted) {
    span?.close(s.now(), grant.reason);
    if (grant.reason === "too_large") return tooLargeAt(s, at, grant.tooLarge);
    // Out of its pool (the view said otherwise): another member, at no cost to the attempts.
    if (s.route && grant.reason === "out") {
      s.target = undefined;
      return AGAIN;
    }
    return s.stamp(s.last ?? gatewayError("queue_timeout", "no slot became free before the request's deadline", { "retry-after": retryAfterSeconds(grant.retryAfterMs) }));
  }
  const shed = onShed(s, grant, tier, limiter, at, leaseId);
  if (shed === "standard") tier = "standard";
  else if (shed !== null) {
    span?.close(s.now(), "tier_shed");
    return shed;
  }
  const timer = new AttemptTimer(plan.signal, plan.gateway.upstreamTimeoutMs, plan.gateway.streamIdleMs);
  const renewing = limiter.keepAlive(leaseId, grant.leaseTtlMs, need.cost);
  const stop = () => {
    renewing();
    timer.stop();
  };
  span?.granted(s.attempts + 1, s.now());
  return { at, tier, limiter, leaseId, attempt: ++s.attempts, timer, stop, sent: s.now(), span };
}

/** The provider's answer to the attempt, or what the request does when it never came. */
export async function send(s: Attempts, slot: Slot): Promise<Response | Again | { res: Response }> {
  const { plan } = s;
  const { at } = slot;
  try {
    const body = at.body ?? (plan.tier && plan.body ? tierBody(plan.tier, s.bodies, plan.body, dialectOf(s, at), slot.tier) : plan.body);
    // A credential made for this attempt (signed over its URL and body, or minted) goes on a copy of its headers.
    const headers = at.authorizer ? new Headers(at.headers) : at.headers;
    await at.authorizer?.authorize(plan.method, at.url, headers, body);
    const got = await s.deps.fetch(at.url, { method: plan.method, headers, body, signal: slot.timer.signal, redirect: "manual" });
    plan.upstream?.(at.key.provider, got.status);
    // A member of another family's answer, as the caller's SDK reads it (pools/wire.ts).
    return { res: at.answer && got.ok ? at.answer(got) : got };
  } catch (err) {
    return unreachable(s, slot, err);
  }
}

/**
 * The attempt never got a whole answer: settled as transient, and retried if policy says so after
 * the policy's own jittered backoff. A name that does not resolve or a refused connection fails
 * again at once, so the limiter's "now" for a provider's one-off fault is not taken here.
 * An attempt that may have reached the provider (its time ran out, its caller left, its answer
 * broke off) is charged to a budget whole (issue 39): the provider bills the work it did.
 */
export async function unreachable(s: Attempts, slot: Slot, err: unknown, midBody = false): Promise<Response | Again> {
  const { at, limiter, leaseId, attempt, timer } = slot;
  slot.stop();
  const left = s.plan.signal.aborted && !timer.timedOut;
  slot.span?.answered(s.now(), 0, left ? "caller_left" : timer.timedOut ? "timeout" : "upstream_unreachable");
  const why = whyUnreachable(err, timer.timedOut ? timer.signal.reason : null, midBody);
  if (left || REACHED.has(why.cause)) s.plan.charges?.lost();
  // The caller left: not the provider's fault, so the slot just goes back.
  if (left) {
    limiter.release(leaseId);
    return GONE();
  }
  // A cut answer was counted by its status already.
  if (!midBody) s.plan.upstream?.(at.key.provider, null);
  const d = s.decide("transient", attempt, null);
  await limiter.settleNow(leaseId, s.outcome(slot, "transient", 0, NO_INFO, s.now() - slot.sent, !d.retry));
  if (!d.retry) return s.stamp(s.last ?? gatewayError("upstream_unreachable", unreachableMessage(why, s.attempts, s.route ? null : at.url.host)));
  // The next attempt may be billed whole too: a budget holds room for it first, or the request ends here.
  const refused = await s.plan.charges?.again();
  if (refused) return s.stamp(refused);
  await s.pause(d.delayMs);
  return AGAIN;
}

/** What an attempt that got no answer may have cost: all but a connection refused or a name or certificate that failed (nothing was sent). */
const REACHED = new Set<Cause>(["timeout", "broken", "other"]);

/**
 * A success goes back to the caller. A plain answer is read whole first: its settle and its
 * release are then one op. A stream, a plain answer past BUFFER_MAX, or one the provider holds
 * open with blank lines is settled at its headers (or its first lines) and released when it has ended.
 */
export async function settleSuccess(s: Attempts, slot: Slot, res: Response, latency: number): Promise<Response | Again> {
  const { plan } = s;
  const { at, limiter, leaseId, attempt, timer } = slot;
  const d = dialectOf(s, at);
  s.route?.answered(at);
  const info = parseRateLimitHeaders(res.headers, s.now(), d);
  const streaming = isStreamed(res.headers, plan.stream, d.usage.frames?.type);
  const success = s.outcome(slot, "success", res.status, info, latency, true);
  const sent = { tier: slot.tier, headers: res.headers, ...(d.usage.frames && { frames: d.usage.frames }), ...(at.priceAs && { price: at.priceAs }) };
  // The tier that served, as the answer's headers tell it, else the tier it went at (a plain answer's body may say more: below).
  const served = (tier: Tier | undefined): Tier => tier ?? servedTier(d.tiers, res.headers, null) ?? slot.tier;
  let body = res.body;
  let held = false;
  if (!streaming && body) {
    let read;
    try {
      // Read whole where it is small, under one idle limit for the whole read (no stream of its own in between).
      read = await readUpTo(body, BUFFER_MAX, (r) => timer.idle(r));
    } catch (err) {
      return unreachable(s, slot, err, true);
    }
    // Cut by the idle limit: its end is no end.
    if (timer.timedOut) return unreachable(s, slot, timer.signal.reason, true);
    if ("whole" in read) {
      slot.stop();
      const usage = plan.meter?.plain(read.whole, plan.tags, sent);
      limiter.settle(leaseId, { ...success, release: true, streaming: false, usage });
      return stampTier(s.stamp(new Response(read.whole, answerInit(res))), served(usage?.tier));
    }
    // Held open with blank lines: passed on as it comes, the provider still at work on it, its
    // usage read at its end (a plain answer's tail, as a non-SSE stream's).
    if ("held" in read) held = true;
    body = "held" in read ? read.held : read.rest;
  }
  // What is passed on as it comes has the idle limit on each of its reads.
  body = body && timer.watch(body);
  limiter.settle(leaseId, { ...success, release: false, streaming: streaming || held });
  const tap = plan.meter?.stream(body, isEventStream(res.headers), plan.tags, sent);
  return stampTier(
    s.stamp(
      streamBack(tap ? tap.body : body, answerInit(res), plan.waitUntil, () => {
        slot.stop();
        limiter.release(leaseId, tap?.record());
      }, plan.gateway.streamIdleMs),
    ),
    served(undefined),
  );
}

/**
 * An error answer: classified, settled before the retry decision is acted on (so a shut gate is
 * shut before anyone else goes), then retried here, moved to another member, or given back.
 */
export async function settleError(s: Attempts, slot: Slot, res: Response, latency: number): Promise<Response | Again> {
  const { plan, route } = s;
  const { at, limiter, leaseId, attempt, timer } = slot;
  // An error body is small and needed twice: to classify it, and to hand it back unchanged.
  const bytes = await readCapped(res.body && timer.watch(res.body), ERROR_BODY_MAX).catch(() => new Uint8Array(0));
  slot.stop();
  const body = parseJson(bytes) ?? new TextDecoder().decode(bytes);
  // A credential the gateway minted that the provider refused (expired or revoked early): minted
  // again once, and the attempt tried again at once; nothing of it is the key's or the member's fault.
  if (res.status === 401 && !s.renewed && at.authorizer?.renew?.()) {
    s.renewed = true;
    await limiter.settleNow(leaseId, s.outcome(slot, "transient", res.status, NO_INFO, latency, false));
    return AGAIN;
  }
  const dialect = dialectOf(s, at);
  const info = parseRateLimitHeaders(res.headers, s.now(), dialect, body);
  // Read at the tier it went at: a flex refusal is the tier's (capacity), the same 429 at standard the key's.
  const { cls, evidence: unusable } = refusal(res.status, withErrorType(body, res.headers, dialect), dialect, info, slot.tier);
  let d = tierStep(s, slot, cls, s.decide(cls, attempt, info.retryAfterMs));
  // In a pool, a member whose key cannot be used goes out, and the request goes on to another.
  // Once: an answer that would take a second member out for the same request says more about
  // what the request asks than about the keys, so it is the caller's answer, and it may only
  // keep out a member already out (a failed probe), never take one out.
  const evidence = route ? (unusable ?? undefined) : undefined;
  const out = s.tookOut ? undefined : evidence;
  let move = false;
  if (out) {
    s.tookOut = true;
    d = attempt < plan.maxAttempts && s.now() < plan.deadline ? { retry: true, delayMs: 0 } : { retry: false, reason: "attempts_exhausted" };
    move = true;
  } else if (route && cls === "too_large" && attempt < plan.maxAttempts && s.now() < plan.deadline) {
    // Another member's limit may take it (too-large.ts).
    tooLargeAnswer(s, at);
    d = { retry: true, delayMs: 0 };
    move = true;
  } else if (route && d.retry) {
    const elsewhere = route.waitElsewhere(at, s.now());
    move = elsewhere !== null && elsewhere < d.delayMs;
  }
  // A refused request that will be back here keeps its claim on the refill it waits for.
  const next = cls === "rate_limit" && d.retry && !move ? `${s.requestId}:${s.asks + 1}` : undefined;
  const word = await limiter.settleNow(leaseId, {
    ...s.outcome(slot, cls, res.status, info, latency, !d.retry), next,
    ...(evidence && { out: evidence, outMs: route!.outMs, ...(!out && { confirmOnly: true }) }),
  });
  if (out) route!.out(at, out, s.now());
  else if (!evidence) route?.answered(at);
  s.last = new Response(route ? route.scrub(bytes) : bytes, { status: res.status, statusText: res.statusText, headers: callerHeaders(res.headers) });
  if (!d.retry) return s.stamp(s.last);
  if (move) {
    // The other member's own line decides when it goes: no pause here.
    s.target = undefined;
    s.avoid = at;
    return AGAIN;
  }
  await s.pause(pauseFor(d.delayMs, word));
  if (s.waiting.aborted) {
    if (next) limiter.cancel(next);
    return GONE();
  }
  return AGAIN;
}


/** The limiter places a retry it says may come now (limiter/outcomes.ts, retryWord): no pause of the Worker's own. */
const pauseFor = (delayMs: number, word: SettleAnswer | undefined) => (word?.retry === "now" ? 0 : delayMs);
