/**
 * The in-flight map of one shard: the first miss for a key leads (goes upstream); identical misses
 * that arrive while it is out wait for its landing. Pure bookkeeping, time passed in; the object
 * holds one of these in memory (waiters are live RPCs, so there is nothing to persist).
 */
export type Landing = "stored" | "failed";

interface Flight {
  id: string;
  until: number;
  waiters: Set<(l: Landing) => void>;
}

/** A waiter's side of `join`: its landing, until when to wait for it, and how to stop waiting. */
export interface Wait {
  wait: Promise<Landing>;
  until: number;
  /** Stops waiting (past `until`): the flight forgets this waiter. */
  leave: () => void;
}

export class Flights {
  private readonly map = new Map<string, Flight>();
  private seq = 0;

  /**
   * `{ lead }`: nobody is out for `key`, the caller goes and must `land` with this id; the flight
   * lasts until `lead`. Otherwise someone is out: the promise settles on its landing, and the caller
   * waits for it until the earlier of the flight's end and its own bound `wait` (a waiter with a
   * shorter deadline than its leader's stops at its own), then calls `leave`.
   */
  join(key: string, now: number, lead: number, wait: number): { lead: string } | Wait {
    const f = this.map.get(key);
    if (f && f.until > now) {
      let told!: (l: Landing) => void;
      const landing = new Promise<Landing>((r) => f.waiters.add((told = r)));
      return { wait: landing, until: Math.min(f.until, wait), leave: () => f.waiters.delete(told) };
    }
    if (f) this.land(key, f.id, "failed"); // a leader that never came back: its waiters go on their own
    const id = `${now.toString(36)}.${(++this.seq).toString(36)}`;
    this.map.set(key, { id, until: lead, waiters: new Set() });
    return { lead: id };
  }

  /** The leader is back. A landing from a leader that was already replaced changes nothing. Returns the waiters told. */
  land(key: string, id: string, landing: Landing): number {
    const f = this.map.get(key);
    if (!f || f.id !== id) return 0;
    this.map.delete(key);
    for (const w of f.waiters) w(landing);
    return f.waiters.size;
  }

  /** Flights out now. */
  get size(): number {
    return this.map.size;
  }

  /** Callers waiting now, over all flights. */
  get waiting(): number {
    let n = 0;
    for (const f of this.map.values()) n += f.waiters.size;
    return n;
  }
}
