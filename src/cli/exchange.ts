import type { GatewayConfig } from "../config/limits";
import { decideRetry } from "../policy/backoff";
import { errorObject } from "../policy/headers";
import type { OutcomeClass } from "../policy/types";
import type { Tier } from "../providers/dialect";
import type { Outlook } from "../tiers/fallback";
import type { Item } from "./input";
import { type OutputLine, outputLine } from "./output";
import { requestId } from "./providers";
import type { StandardWhy } from "./types";

/** Counters the runner shows while it works and sums up at the end. */
export interface Counters {
  /** Upstream (or gateway) requests open right now. */
  inFlight: number;
  /** 429s that were waited out and sent again instead of ending up in the output. */
  absorbed429: number;
  /** Attempts after the first, for any reason. */
  retries: number;
}

/** The tier that served a line, and, in a run that asked another, why it was standard. */
export interface Served {
  tier: Tier;
  why?: StandardWhy;
}

/** What one item's driver needs from the runner. */
export interface SendContext {
  fetch: typeof fetch;
  now: () => number;
  random: () => number;
  gateway: GatewayConfig;
  /** Per attempt; past it the attempt counts as a transient failure (an upstream time-out). */
  requestTimeoutMs: number;
  /** First Ctrl-C: nothing new is sent; waits end early. */
  stop: AbortSignal;
  /** Second Ctrl-C: requests in flight are cut. */
  abort: AbortSignal;
  counters: Counters;
  url: (item: Item) => string;
  headers: (item: Item) => Record<string, string>;
  /** The tier the run's lines go at where their provider sells it (`--mode flex`); absent: none asked. */
  tier?: Tier;
  /** The tier that served each answered line, by custom_id, until its line is recorded (priced at it). */
  served: Map<string, Served>;
  /** Direct mode: the run's outlook of each provider's and model's tier (tiers/fallback.ts). */
  outlooks: Map<string, Outlook>;
}

/** One HTTP answer, read whole: a batch keeps bodies, it does not stream them. */
export interface Exchange {
  status: number;
  statusText: string;
  headers: Headers;
  /** Parsed JSON, or the raw text when it is not JSON. */
  body: unknown;
  latencyMs: number;
}

/** Sends one attempt and reads its body; null on a network failure, a time-out or an abort. */
export async function send(ctx: SendContext, item: Item): Promise<Exchange | null> {
  const sent = ctx.now();
  ctx.counters.inFlight += 1;
  try {
    const signal = AbortSignal.any([ctx.abort, AbortSignal.timeout(ctx.requestTimeoutMs)]);
    const headers = { "content-type": "application/json", ...ctx.headers(item) };
    const res = await ctx.fetch(ctx.url(item), { method: "POST", headers, body: item.payload, signal });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, statusText: res.statusText, headers: res.headers, body, latencyMs: ctx.now() - sent };
  } catch {
    return null;
  } finally {
    ctx.counters.inFlight -= 1;
  }
}

/**
 * decideRetry with the run's settings. A 429 in a batch is the limiter's miss, not the item's
 * fault: it is waited out until the item's deadline whatever the attempt count, while transient
 * errors get `maxAttempts` as in the gateway.
 */
export function decide(ctx: SendContext, cls: OutcomeClass, attempt: number, hintMs: number | null, deadline: number) {
  const maxAttempts = cls === "rate_limit" ? Number.POSITIVE_INFINITY : ctx.gateway.maxAttempts;
  return decideRetry({
    cls, attempt, hintMs, maxAttempts, now: ctx.now(), deadline,
    baseMs: ctx.gateway.baseBackoffMs, maxMs: ctx.gateway.maxBackoffMs, random: ctx.random,
  });
}

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** The output line for an HTTP answer: a success, or the provider's error with its code. */
export function answerLine(item: Item, ex: Exchange, cls: OutcomeClass): OutputLine {
  const response = { status_code: ex.status, request_id: requestId(ex.headers), body: ex.body };
  if (cls === "success") return outputLine(item.customId, response, null);
  const err = errorObject(ex.body);
  const code = cls === "hard_quota" ? (text(err?.code) ?? "quota_exhausted") : (text(err?.code) ?? text(err?.type) ?? `http_${ex.status}`);
  return outputLine(item.customId, response, { code, message: text(err?.message) ?? `HTTP ${ex.status} ${ex.statusText}`.trim() });
}

/** An item that ends without a usable answer; `last` is the last HTTP answer it had, if any. */
export function failLine(item: Item, code: string, message: string, last: Exchange | null): OutputLine {
  const response = last ? { status_code: last.status, request_id: requestId(last.headers), body: last.body } : null;
  return outputLine(item.customId, response, { code, message });
}

/**
 * Ctrl-C caught this item: never sent → no line (the item is simply not done); sent at least
 * once → an `interrupted` line, which `--resume` runs again.
 */
export function stoppedLine(item: Item, attempted: boolean, last: Exchange | null): OutputLine | null {
  return attempted ? failLine(item, "interrupted", "stopped by Ctrl-C before an answer; --resume runs it again", last) : null;
}
