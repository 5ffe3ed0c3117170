/**
 * Claims of refused requests on the refill they wait for. A request the provider refused for want
 * of quota waits out the hint and comes back; without a claim, whoever the queue grants in the
 * meantime takes the refill, and the same request is refused again until its attempts run out.
 * A claim is keyed by the lease id its retry will come with; it counts against the quota for
 * everyone granted after it, and ends when the retry is granted, cancelled, or fails to come.
 */
export interface Claim {
  cost: number;
  /** The retry is not coming after this (its caller left, or its Worker died). */
  until: number;
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

  /** Each claim in the order it was made, with the quota it and the claims before it need: {requests, tokens}. */
  *inOrder(): Generator<{ id: string; requests: number; tokens: number }> {
    let requests = 0;
    let tokens = 0;
    for (const [id, c] of this.#byId) {
      requests += 1;
      tokens += c.cost;
      yield { id, requests, tokens };
    }
  }

  /** What all claims together hold back from later grants. */
  total(): { requests: number; tokens: number } {
    let tokens = 0;
    for (const c of this.#byId.values()) tokens += c.cost;
    return { requests: this.#byId.size, tokens };
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
