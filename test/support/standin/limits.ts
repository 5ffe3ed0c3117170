// Per-credential limits: four token buckets (requests, tokens, input tokens, output tokens) and
// the number of requests in flight. Shared by every endpoint of both providers.
import { bucketSpec, TokenBucket } from "./bucket.ts";
import type { BucketSpec } from "./bucket.ts";
import type { StandinOptions } from "./options.ts";

export type LimitKind = "requests" | "tokens" | "input" | "output";
const KINDS: readonly LimitKind[] = ["requests", "tokens", "input", "output"];

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
}

export type Admission =
  | { ok: true }
  | { ok: false; kind: LimitKind; limit: number; used: number; requested: number; waitMs: number };

function amount(kind: LimitKind, cost: Cost): number {
  if (kind === "requests") return 1;
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
  ];
  return new Map(all.filter((e): e is [LimitKind, BucketSpec] => e[1] !== null));
}

export class Account {
  inFlight = 0;
  readonly #buckets = new Map<LimitKind, TokenBucket>(KINDS.map((k) => [k, new TokenBucket()]));

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
      };
    });
  }

  refill(): void {
    for (const b of this.#buckets.values()) b.refill();
  }

  /** Empties every active bucket at `now`: a credential that has just been busy. */
  drain(o: StandinOptions, now: number): void {
    for (const [kind, spec] of specs(o)) this.#bucket(kind).take(spec, this.#bucket(kind).level(spec, now), now);
  }
}
