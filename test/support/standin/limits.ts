// Per-credential limits: token buckets per minute (requests, tokens, input tokens, output tokens),
// per day (requests: Groq's and Gemini's RPD) and per month (tokens: Mistral's monthly cap), and the
// number of requests in flight. Shared by every endpoint of every dialect (a dialect may scope an
// account to a model or a deployment: handle.ts).
import { bucketSpec, DAY_MS, MONTH_MS, TokenBucket } from "./bucket.ts";
import type { BucketSpec } from "./bucket.ts";
import type { StandinOptions } from "./options.ts";
import { PromptCache } from "./prompt-cache.ts";

export type LimitKind = "requests" | "tokens" | "input" | "output" | "dayRequests" | "monthTokens";
export const LIMIT_KINDS: readonly LimitKind[] = ["requests", "tokens", "input", "output", "dayRequests", "monthTokens"];

/** What a request costs: its estimated prompt tokens and the output tokens it may produce. */
export interface Cost {
  input: number;
  output: number;
}

export interface LimitState {
  kind: LimitKind;
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** The window the limit is per (a minute, a day, 30 days). */
  windowMs: number;
}

export type Admission =
  | { ok: true }
  | { ok: false; kind: LimitKind; limit: number; used: number; requested: number; waitMs: number };

function amount(kind: LimitKind, cost: Cost): number {
  if (kind === "requests" || kind === "dayRequests") return 1;
  if (kind === "input") return cost.input;
  if (kind === "output") return cost.output;
  return cost.input + cost.output;
}

function specs(o: StandinOptions): Map<LimitKind, BucketSpec> {
  const fraction = typeof o.burst === "number" ? o.burst : 1;
  const abs = typeof o.burst === "number" ? {} : o.burst;
  const all: [LimitKind, BucketSpec | null][] = [
    ["requests", bucketSpec(o.rpm, fraction, abs.requests)],
    ["tokens", bucketSpec(o.tpm, fraction, abs.tokens)],
    ["input", bucketSpec(o.itpm ?? o.tpm, fraction, abs.tokens)],
    ["output", bucketSpec(o.otpm ?? o.tpm, fraction, abs.tokens)],
    // A day's and a month's allowance hold the whole of it: no burst below the limit.
    ["dayRequests", bucketSpec(o.rpd, 1, undefined, DAY_MS)],
    ["monthTokens", bucketSpec(o.monthlyTokens, 1, undefined, MONTH_MS)],
  ];
  return new Map(all.filter((e): e is [LimitKind, BucketSpec] => e[1] !== null));
}

/**
 * The options as a dialect counts them: one that limits input and output tokens apart (its
 * `tokensApart`) has no bucket on both together, so a `tpm` is each of its two.
 */
export function countedApart(d: { tokensApart?: true }, o: StandinOptions): StandinOptions {
  return d.tokensApart && o.tpm > 0 ? { ...o, itpm: o.itpm ?? o.tpm, otpm: o.otpm ?? o.tpm, tpm: 0 } : o;
}

export class Account {
  inFlight = 0;
  /** Its prompt cache, where its dialect has one. */
  readonly prompts = new PromptCache();
  readonly #buckets = new Map<LimitKind, TokenBucket>(LIMIT_KINDS.map((k) => [k, new TokenBucket()]));

  #bucket(kind: LimitKind): TokenBucket {
    return this.#buckets.get(kind)!;
  }

  /**
   * Takes the cost from every bucket, or from none. A refusal names the first bucket short of
   * tokens, and waitMs is how long until every bucket could pay (Infinity: larger than a bucket).
   */
  admit(o: StandinOptions, cost: Cost, now: number): Admission {
    const active = specs(o);
    let refusal: Admission | null = null;
    let waitMs = 0;
    for (const [kind, spec] of active) {
      const n = amount(kind, cost);
      const wait = this.#bucket(kind).waitMs(spec, n, now);
      if (wait <= 0) continue;
      waitMs = Math.max(waitMs, wait);
      if (!refusal) {
        const used = spec.limit - Math.floor(Math.max(0, this.#bucket(kind).level(spec, now)));
        refusal = { ok: false, kind, limit: spec.limit, used: Math.max(0, used), requested: n, waitMs: 0 };
      }
    }
    if (refusal) return { ...refusal, waitMs };
    for (const [kind, spec] of active) this.#bucket(kind).take(spec, amount(kind, cost), now);
    return { ok: true };
  }

  /** The state of every active bucket, for the rate-limit headers. */
  snapshot(o: StandinOptions, now: number): LimitState[] {
    return [...specs(o)].map(([kind, spec]) => {
      const bucket = this.#bucket(kind);
      return {
        kind,
        limit: spec.limit,
        remaining: Math.max(0, Math.floor(bucket.level(spec, now))),
        resetMs: Math.max(0, bucket.fullInMs(spec, now)),
        windowMs: spec.windowMs,
      };
    });
  }

  /** Gives tokens back to the token buckets, or takes more (a negative cost): a reservation settled at what it drew (Bedrock's, bedrock.ts). */
  refund(o: StandinOptions, cost: Cost, now: number): void {
    for (const [kind, spec] of specs(o)) if (kind !== "requests" && kind !== "dayRequests") this.#bucket(kind).take(spec, -amount(kind, cost), now);
  }

  refill(): void {
    for (const b of this.#buckets.values()) b.refill();
  }

  /** Empties every active bucket at `now`: a credential that has just been busy. */
  drain(o: StandinOptions, now: number): void {
    for (const [kind, spec] of specs(o)) this.#bucket(kind).take(spec, this.#bucket(kind).level(spec, now), now);
  }
}
