/**
 * The in-flight map of one shard: the first miss for a key leads (goes upstream); identical misses
 * that arrive while it is out wait for its landing. Pure bookkeeping, time passed in; the object
 * holds one of these in memory (waiters are live RPCs, so there is nothing to persist).
 */
export type Landing = "stored" | "failed";

interface Flight {
  id: string;
  until: number;
  waiters: ((l: Landing) => void)[];
}

export class Flights {
  private readonly map = new Map<string, Flight>();
  private seq = 0;

  /**
   * `{ lead }`: nobody is out for `key`, the caller goes and must `land` with this id. `{ wait }`:
   * someone is; the promise settles on its landing, or as "failed" once the flight is past `until`.
   */
  join(key: string, now: number, until: number): { lead: string } | { wait: Promise<Landing>; until: number } {
    const f = this.map.get(key);
    if (f && f.until > now) return { wait: new Promise<Landing>((r) => f.waiters.push(r)), until: f.until };
    if (f) this.land(key, f.id, "failed"); // a leader that never came back: its waiters go on their own
    const id = `${now.toString(36)}.${(++this.seq).toString(36)}`;
    this.map.set(key, { id, until, waiters: [] });
    return { lead: id };
  }

  /** The leader is back. A landing from a leader that was already replaced changes nothing. Returns the waiters told. */
  land(key: string, id: string, landing: Landing): number {
    const f = this.map.get(key);
    if (!f || f.id !== id) return 0;
    this.map.delete(key);
    for (const w of f.waiters) w(landing);
    return f.waiters.length;
  }

  get size(): number {
    return this.map.size;
  }
}
