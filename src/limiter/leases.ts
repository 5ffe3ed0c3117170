import type { Lease } from "./state";

/**
 * The slots held: one lease per granted attempt, in grant order, with its expiry. In-flight is
 * their number; `busy` leaves out the answers already complete whose Worker has not released the
 * slot yet (the provider is done with them, as its own cap counts). Pure: time is passed in.
 */
export class Leases {
  #byId = new Map<string, Lease>();
  /** Grants made by this instance, numbered: tells a 429's echo from a fresh one. */
  #grants = 0;
  /** Leases whose answer is complete but whose slot the Worker has not released yet. */
  #doneOpen = 0;
  /** Tickets not yet used: slots held with no request out on them, and their costs. */
  idle = 0;
  idleCost = 0;
  idleOut = 0;
  /** Tickets used (or lapsed) since `takeUsed` last looked: their rows must say so (a restart counts them once). */
  #used: string[] = [];

  get size(): number {
    return this.#byId.size;
  }

  /** Requests out: held leases less the tickets not used yet. */
  get active(): number {
    return this.#byId.size - this.idle;
  }

  /** Slots the provider is busy with: held leases less the answers already complete. */
  get busy(): number {
    return this.#byId.size - this.#doneOpen;
  }

  /** The number of the latest grant. */
  get seq(): number {
    return this.#grants;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  get(id: string): Lease | undefined {
    return this.#byId.get(id);
  }

  values(): IterableIterator<Lease> {
    return this.#byId.values();
  }

  /** A new lease, numbered, with the provider's in-flight level it makes (itself included). */
  grant(id: string, cost: number, now: number, ttlMs: number, caller?: string, out?: number): Lease {
    const lease: Lease = { id, cost, expiresAt: now + ttlMs, seq: ++this.#grants, grantedAt: now, caller, ...(out && { out }) };
    this.#byId.set(id, lease);
    lease.inFlight = this.busy - this.idle;
    return lease;
  }

  /** A ticket (tickets/): its slot held from now, unnumbered until a request uses it or it lapses at `lapseAt`. */
  ticket(id: string, cost: number, expiresAt: number, lapseAt: number, out?: number): Lease {
    const lease = this.hold(id, cost, expiresAt);
    if (out) lease.out = out;
    lease.ticket = lapseAt;
    this.idle++;
    this.idleCost += cost;
    this.idleOut += out ?? 0;
    return lease;
  }

  /** Tickets not used whose lapse has come, and when it came. */
  lapsed(now: number): [string, number][] {
    const out: [string, number][] = [];
    if (this.idle > 0) for (const l of this.#byId.values()) if (l.ticket !== undefined && l.ticket <= now) out.push([l.id, l.ticket]);
    return out;
  }

  /** When the next ticket not used lapses (Infinity: none). */
  nextLapse(): number {
    let at = Infinity;
    if (this.idle > 0) for (const l of this.#byId.values()) if (l.ticket !== undefined && l.ticket < at) at = l.ticket;
    return at;
  }

  /**
   * A request used the ticket `id` (or it lapsed): numbered and dated from now, as a grant is. A
   * request's use lives a lease's time from then (never less than a renewal gave it); a lapse
   * (`extend` false) keeps the expiry it has, so a ticket restored after a restart, whose holder
   * may be gone, ends within the restore grace as a restored lease does.
   */
  use(id: string, now: number, ttlMs: number, caller?: string, extend = true): Lease | undefined {
    const lease = this.#byId.get(id);
    if (lease?.ticket === undefined) return lease;
    this.#unticket(lease);
    this.#used.push(id);
    Object.assign(lease, { seq: ++this.#grants, grantedAt: now, expiresAt: extend ? Math.max(lease.expiresAt, now + ttlMs) : lease.expiresAt, caller, inFlight: this.busy - this.idle });
    return lease;
  }

  /** The tickets used or lapsed since the last look, still held. */
  takeUsed(): Lease[] {
    const out = this.#used.flatMap((id) => this.#byId.get(id) ?? []);
    this.#used = [];
    return out;
  }

  /** A lease this instance did not grant (restored after a restart, or taken back on renewal): held, unnumbered. */
  hold(id: string, cost: number, expiresAt: number): Lease {
    this.release(id);
    const lease: Lease = { id, cost, expiresAt };
    this.#byId.set(id, lease);
    return lease;
  }

  /** Its whole answer is in: the slot stays held, but the provider is no longer busy with it. */
  done(lease: Lease): void {
    if (lease.done || !this.#byId.has(lease.id)) return;
    lease.done = true;
    this.#doneOpen++;
  }

  /** Takes the lease out; returns it, or undefined if it was not held. */
  release(id: string): Lease | undefined {
    const lease = this.#byId.get(id);
    if (!lease) return undefined;
    if (lease.done) this.#doneOpen--;
    if (lease.ticket !== undefined) this.#unticket(lease);
    this.#byId.delete(id);
    return lease;
  }

  /** Extends a held lease; returns whether it was held. */
  renew(id: string, now: number, ttlMs: number): boolean {
    const lease = this.#byId.get(id);
    if (lease) lease.expiresAt = now + ttlMs;
    return lease !== undefined;
  }

  /** Leases whose holder has not renewed them in time (a Worker that died mid-request), still held. */
  expired(now: number): Lease[] {
    return [...this.#byId.values()].filter((l) => l.expiresAt <= now);
  }

  nextExpiry(): number | null {
    let min: number | null = null;
    for (const l of this.#byId.values()) if (min === null || l.expiresAt < min) min = l.expiresAt;
    return min;
  }

  /** When the longest-held slot was granted (leases keep grant order), or null. */
  oldestGrantAt(): number | null {
    return (this.#byId.values().next().value as Lease | undefined)?.grantedAt ?? null;
  }

  #unticket(lease: Lease): void {
    lease.ticket = undefined;
    this.idle--;
    this.idleCost = this.idle === 0 ? 0 : this.idleCost - lease.cost;
    this.idleOut = this.idle === 0 ? 0 : this.idleOut - (lease.out ?? 0);
  }
}
