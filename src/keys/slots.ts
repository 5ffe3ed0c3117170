// A virtual key's cap on its requests in flight (`maxConcurrency`), across every member of its
// pool and every model: the members' limiters each see only their own share, so the cap is held
// in one place per key. First come, first served; a slot is a lease that expires unless its Worker
// renews it, so a Worker that dies gives it back. Pure: time comes in as an argument.

export interface SlotWaiter {
  id: string;
  /** Epoch ms after which it stops waiting. */
  deadline: number;
}

export interface Pumped {
  granted: string[];
  timedOut: string[];
}

export class Slots {
  /** Lease id to when it expires. */
  private held = new Map<string, number>();
  private waiting: SlotWaiter[] = [];

  get inFlight(): number {
    return this.held.size;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Asks for a slot: `granted` at once (an id already held is granted again: the Worker may repeat
   * a call), `queued` behind those waiting, or `refused` when its deadline has passed.
   */
  ask(id: string, cap: number, deadline: number, now: number, ttlMs: number): "granted" | "queued" | "refused" {
    if (this.held.has(id)) return "granted";
    if (this.waiting.some((w) => w.id === id)) return "queued";
    if (this.waiting.length === 0 && this.held.size < cap) {
      this.held.set(id, now + ttlMs);
      return "granted";
    }
    if (deadline <= now) return "refused";
    this.waiting.push({ id, deadline });
    return "queued";
  }

  /** The slot comes back (or the waiter leaves); unknown ids change nothing. */
  release(id: string): void {
    if (!this.held.delete(id)) this.waiting = this.waiting.filter((w) => w.id !== id);
  }

  /**
   * Extends a held lease. One this object does not know (it restarted and forgot) is taken back
   * while there is room, so the count heals within one renewal interval.
   */
  renew(id: string, cap: number, now: number, ttlMs: number): boolean {
    if (this.held.has(id) || this.held.size < cap) {
      this.held.set(id, now + ttlMs);
      return true;
    }
    return false;
  }

  /** Leases past their expiry go; waiters past their deadline leave; the head waiters take the room. */
  pump(cap: number, now: number, ttlMs: number): Pumped {
    for (const [id, expires] of this.held) if (expires <= now) this.held.delete(id);
    const timedOut = this.waiting.filter((w) => w.deadline <= now).map((w) => w.id);
    if (timedOut.length) this.waiting = this.waiting.filter((w) => w.deadline > now);
    const granted: string[] = [];
    while (this.waiting.length > 0 && this.held.size < cap) {
      const w = this.waiting.shift()!;
      this.held.set(w.id, now + ttlMs);
      granted.push(w.id);
    }
    return { granted, timedOut };
  }

  /** When the next lease expires or waiter times out; null: nothing to wake for. */
  nextWake(): number | null {
    let next = Number.POSITIVE_INFINITY;
    for (const at of this.held.values()) next = Math.min(next, at);
    for (const w of this.waiting) next = Math.min(next, w.deadline);
    return Number.isFinite(next) ? next : null;
  }
}
