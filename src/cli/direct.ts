import { randomUUID } from "node:crypto";
import type { Outcome } from "../limiter/core";
import type { AcquireResult } from "../limiter/types";
import { classify } from "../policy/classify";
import { costFor, estimateFor } from "../policy/estimate";
import { parseRateLimitHeaders } from "../policy/limits";
import type { OutcomeClass, RateLimitInfo } from "../policy/types";
import type { RetryDecision } from "../policy/backoff";
import { sleep } from "../sleep";
import { usageIn } from "../usage/tokens";
import { servedTier } from "../tiers/body";
import { noteTierTry, tierRetry, tiersToTry, worthTrying } from "../tiers/fallback";
import { dialectOfLine } from "./providers";
import { atTier, type LineTier, lineTier, standardWhy } from "./tier";
import { answerLine, decide, failLine, send, type SendContext, stoppedLine } from "./exchange";
import type { Item } from "./input";
import type { LocalLimiter } from "./local-limiter";
import type { OutputLine } from "./output";

const NO_INFO: RateLimitInfo = { retryAfterMs: null, requests: null, tokens: null };

const outcome = (cls: OutcomeClass, status: number, info: RateLimitInfo, latencyMs: number, attempt: number, final: boolean): Outcome =>
  ({ cls, status, info, latencyMs, attempt, final });

/** Waits for a slot; the first Ctrl-C takes the waiter out of the queue. */
async function acquire(ctx: SendContext, limiter: LocalLimiter, leaseId: string, need: { cost: number; out?: number }, retry: boolean): Promise<AcquireResult> {
  const leave = () => limiter.cancel(leaseId);
  ctx.stop.addEventListener("abort", leave);
  try {
    return await limiter.acquire({ leaseId, ...need, retry, deadline: ctx.now() + ctx.gateway.deadlineMs });
  } finally {
    ctx.stop.removeEventListener("abort", leave);
  }
}

/**
 * One item, provider called directly, the way the Worker's run() drives the Durable Object:
 * acquire, send, settle, and retry what policy says to retry (a retry rejoins at the head of the
 * queue). A queue time-out is waited out and the item queues again: a batch has no caller to give
 * the 429 to. Returns the item's output line, or null when Ctrl-C stopped it before it was sent.
 */
export async function runDirect(ctx: SendContext, limiter: LocalLimiter, item: Item): Promise<OutputLine | null> {
  const bytes = Buffer.byteLength(item.payload);
  const nonce = randomUUID();
  let last: Awaited<ReturnType<typeof send>> = null;
  let deadline = Number.POSITIVE_INFINITY;
  // A tier (--mode flex) where the line's provider sells it: its field written, its refusals its own.
  const tiered = lineTier(ctx, item);
  const dialect = dialectOfLine(item);
  // As the Worker's: the prompt's and the output's apart where the dialect limits generated tokens apart.
  const whole = estimateFor(dialect, item.url, item.body, bytes);
  let need = costFor(dialect, whole.cost, whole.out, item.model);

  for (let attempt = 1; ; ) {
    const leaseId = `${nonce}:${attempt}`;
    if (ctx.stop.aborted) {
      if (attempt > 1) limiter.cancel(leaseId); // drops the claim a refused attempt left for it
      return stoppedLine(item, attempt > 1, last);
    }
    const grant = await acquire(ctx, limiter, leaseId, need, attempt > 1);
    if (ctx.stop.aborted) {
      limiter.cancel(leaseId);
      return stoppedLine(item, attempt > 1, last);
    }
    if (!grant.granted) {
      // Larger than a limit its provider refuses larger requests against: it would never go. Unless
      // its estimate prices media by their bytes (policy/estimate.ts): at the limit, the provider decides.
      if (grant.reason === "too_large" && whole.unsure && grant.tooLarge && need.cost > grant.tooLarge.limit) {
        need = { ...need, cost: grant.tooLarge.limit };
        continue;
      }
      if (grant.reason === "too_large") return failLine(item, "request_too_large", `the line's estimated ${need.cost} tokens are more than the key's limit of ${grant.tooLarge?.limit} tokens a window`, last);
      await sleep(grant.retryAfterMs, ctx.stop);
      continue;
    }
    // The retry budget (time) starts with the first send, not with the wait in the queue.
    if (attempt === 1) deadline = ctx.now() + ctx.gateway.deadlineMs;

    // A line that waited on its tier goes at standard once the tier looks shed (as the gateway's attempts).
    if (tiered && attempt > 1 && tiered.tier !== "standard" && !worthTrying(tiered.outlook, ctx.now())) (tiered.tier = "standard"), (tiered.why ??= "shed");
    const ex = await send(ctx, tiered ? atTier(item, tiered) : item);
    if (ex === null) {
      const d = ctx.abort.aborted ? null : decide(ctx, "transient", attempt, null, deadline);
      limiter.settle(leaseId, outcome("transient", 0, NO_INFO, 0, attempt, !d?.retry));
      if (!d) return stoppedLine(item, true, last);
      if (!d.retry) return failLine(item, "upstream_unreachable", `the provider could not be reached (${attempt} attempts)`, last);
      ctx.counters.retries += 1;
      await sleep(d.delayMs, ctx.stop);
      attempt += 1;
      continue;
    }

    const now = ctx.now();
    // Read as the gateway reads its provider's answers: its row's windows, periods and refusals.
    const info = parseRateLimitHeaders(ex.headers, now, dialect, ex.status >= 400 ? ex.body : undefined);
    const cls = classify(ex.status, ex.body, dialect, info, tiered?.tier);
    const d = cls === "success" ? null : tierDecision(ctx, tiered, cls, decide(ctx, cls, attempt, info.retryAfterMs, deadline), attempt, deadline);
    if (cls === "success" && tiered) {
      if (tiered.tier !== "standard") noteTierTry(tiered.outlook, false);
      const served = servedTier(tiered.spec, ex.headers, ex.body) ?? tiered.tier;
      ctx.served.set(item.customId, { tier: served, why: standardWhy(ctx.tier, served, tiered.refusals, true, tiered.why) });
    } else if (cls === "success" && ctx.tier) ctx.served.set(item.customId, { tier: "standard", why: "not_sold" });
    // Settled before any back-off, so a 429's shared gate is shut before anyone else goes.
    // A refused request that will be back keeps its claim on the refill it waits for (as run.ts).
    const next = cls === "rate_limit" && d?.retry ? `${nonce}:${attempt + 1}` : undefined;
    limiter.settle(leaseId, { ...outcome(cls, ex.status, info, ex.latencyMs, attempt, !d?.retry), next });
    if (cls === "success") {
      const t = usageIn(ex.body, dialect.usage.at);
      if (t) limiter.answered(t.input, t.cached);
    }
    if (!d?.retry) return answerLine(item, ex, cls);
    last = ex;
    if (cls === "rate_limit") ctx.counters.absorbed429 += 1;
    ctx.counters.retries += 1;
    await sleep(d.delayMs, ctx.stop);
    attempt += 1;
  }
}

/** A line sent at a tier (tiers/fallback.ts, tierRetry, as the gateway's steps): waited through at the tier, or on at standard. */
function tierDecision(ctx: SendContext, t: LineTier | null, cls: OutcomeClass, d: RetryDecision, attempt: number, deadline: number): RetryDecision {
  if (!t || t.tier === "standard") return d;
  noteTierTry(t.outlook, cls === "capacity");
  const next = tierRetry(cls, d, {
    refusals: cls === "capacity" ? ++t.refusals : t.refusals, tries: tiersToTry(t.outlook), fallback: "standard", attempt,
    maxAttempts: ctx.gateway.maxAttempts, now: ctx.now(), started: deadline - ctx.gateway.deadlineMs, deadline,
  });
  if (next.standard) t.tier = "standard";
  return next.retry;
}
