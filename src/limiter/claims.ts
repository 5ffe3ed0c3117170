/**
 * Claims of refused requests on the refill they wait for. A request the provider refused for want
 * of quota waits out the hint and comes back; without a claim, whoever the queue grants in the
 * meantime takes the refill, and the same request is refused again until its attempts run out.
 * A claim is keyed by the lease id its retry will come with; it counts against the quota for
 * everyone granted after it, and ends when the retry is granted, cancelled, or fails to come.
 */
export interface Claim {
  cost: number;
  /** Its output allowance (a window of generated tokens'). */
  out?: number;
  /** The retry is not coming after this (its caller left, or its Worker died). */
  until: number;
}

/** What claims hold of each window. */
export interface Held {
  requests: number;
  tokens: number;
  output: number;
}

export class Claims {
  #byId = new Map<string, Claim>();

  get size(): number {
    return this.#byId.size;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  add(id: string, claim: Claim): void {
    this.#byId.set(id, claim);
  }

  drop(id: string): boolean {
    return this.#byId.delete(id);
  }

  /** Forgets claims whose retry did not come in time. */
  expire(now: number): void {
    for (const [id, c] of this.#byId) if (c.until <= now) this.#byId.delete(id);
  }

  /** Each claim in the order it was made, with the quota it and the claims before it need: {requests, tokens, output}. */
  *inOrder(): Generator<{ id: string } & Held> {
    const held: Held = { requests: 0, tokens: 0, output: 0 };
    for (const [id, c] of this.#byId) {
      held.requests += 1;
      held.tokens += c.cost;
      held.output += c.out ?? 0;
      yield { id, ...held };
    }
  }

  /** What all claims together hold back from later grants. */
  total(): Held {
    const held: Held = { requests: this.#byId.size, tokens: 0, output: 0 };
    for (const c of this.#byId.values()) {
      held.tokens += c.cost;
      held.output += c.out ?? 0;
    }
    return held;
  }

  earliestEnd(): number | null {
    let min: number | null = null;
    for (const c of this.#byId.values()) if (min === null || c.until < min) min = c.until;
    return min;
  }

  clear(): void {
    this.#byId.clear();
  }
}
