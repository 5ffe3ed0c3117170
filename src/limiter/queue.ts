/** Someone waiting for a slot. `retry` waiters were already first in line once. */
export interface Waiter {
  id: string;
  cost: number;
  deadline: number;
  retry: boolean;
  enqueuedAt: number;
}

/** Arrival order, except that retries go ahead of fresh arrivals (in their own arrival order). */
export class WaitQueue<W extends Waiter = Waiter> {
  private retries: W[] = [];
  private fresh: W[] = [];
  /** A lower bound on the earliest deadline: no pump scans the queue before it passes. */
  private soonest = Number.POSITIVE_INFINITY;

  get size(): number {
    return this.retries.length + this.fresh.length;
  }

  push(w: W): void {
    (w.retry ? this.retries : this.fresh).push(w);
    if (w.deadline < this.soonest) this.soonest = w.deadline;
  }

  peek(): W | undefined {
    return this.retries[0] ?? this.fresh[0];
  }

  shift(): W | undefined {
    return this.retries.length > 0 ? this.retries.shift() : this.fresh.shift();
  }

  has(id: string): boolean {
    return this.retries.some((w) => w.id === id) || this.fresh.some((w) => w.id === id);
  }

  remove(id: string): W | undefined {
    for (const list of [this.retries, this.fresh]) {
      const i = list.findIndex((w) => w.id === id);
      if (i >= 0) return list.splice(i, 1)[0];
    }
    return undefined;
  }

  /** Removes and returns, in queue order, every waiter whose deadline is at or before `now`. */
  takeExpired(now: number): W[] {
    if (now < this.soonest) return [];
    const out: W[] = [];
    const keep = (list: W[]) =>
      list.filter((w) => {
        if (w.deadline > now) return true;
        out.push(w);
        return false;
      });
    this.retries = keep(this.retries);
    this.fresh = keep(this.fresh);
    this.soonest = Number.POSITIVE_INFINITY;
    for (const list of [this.retries, this.fresh]) for (const w of list) if (w.deadline < this.soonest) this.soonest = w.deadline;
    return out;
  }

  /** The earliest deadline, or a moment a little before it (waking early only costs a pump). */
  earliestDeadline(): number | null {
    return this.size === 0 ? null : this.soonest;
  }

  /** Empties the queue, returning everyone who was in it, in order. */
  drain(): W[] {
    const all = [...this];
    this.retries = [];
    this.fresh = [];
    this.soonest = Number.POSITIVE_INFINITY;
    return all;
  }

  *[Symbol.iterator](): IterableIterator<W> {
    yield* this.retries;
    yield* this.fresh;
  }
}
