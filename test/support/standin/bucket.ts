// Token bucket with continuous refill (a limit per minute, day or month). The spec (limit, capacity) is passed on every call, so a
// live change of options takes effect at once; the level is clamped to the new capacity.

export interface BucketSpec {
  /** The advertised limit per window (what the limit headers report). */
  limit: number;
  /** Most tokens the bucket holds (the burst). */
  capacity: number;
  /** The window the limit is per: a minute, or a day (requests per day), or 30 days (tokens per month). */
  windowMs: number;
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
export const MONTH_MS = 30 * DAY_MS;

/** A limit per window (a minute unless told) with a burst given as a fraction of it or as an absolute capacity. */
export function bucketSpec(limit: number | null, fraction: number, absolute?: number, windowMs = MINUTE_MS): BucketSpec | null {
  if (limit === null || !Number.isFinite(limit) || limit <= 0) return null;
  const capacity = absolute ?? Math.max(1, Math.floor(limit * fraction));
  return { limit, capacity, windowMs };
}

function perMs(spec: BucketSpec): number {
  return spec.limit / spec.windowMs;
}

export class TokenBucket {
  #level: number | null = null; // null: never touched, full
  #at = 0;

  /** Current level after refilling up to `now` (ms, monotonic). */
  level(spec: BucketSpec, now: number): number {
    const prev = this.#level ?? spec.capacity;
    const elapsed = this.#level === null ? 0 : Math.max(0, now - this.#at);
    const level = Math.min(spec.capacity, prev + elapsed * perMs(spec));
    this.#level = level;
    this.#at = now;
    return level;
  }

  /** Milliseconds until `n` tokens are available; 0 if they are now, Infinity if never. */
  waitMs(spec: BucketSpec, n: number, now: number): number {
    if (n > spec.capacity) return Infinity;
    const missing = n - this.level(spec, now);
    return missing <= 0 ? 0 : missing / perMs(spec);
  }

  take(spec: BucketSpec, n: number, now: number): void {
    this.#level = this.level(spec, now) - n;
  }

  /** Milliseconds until the bucket is full again (OpenAI's and Anthropic's "reset"). */
  fullInMs(spec: BucketSpec, now: number): number {
    return (spec.capacity - this.level(spec, now)) / perMs(spec);
  }

  refill(): void {
    this.#level = null;
  }
}
