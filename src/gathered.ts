/**
 * Counts gathered in one isolate and sent in one call per window, so that a count costs no call of
 * its own: the first add of a window hands back the flush (for waitUntil), later ones join it.
 * Counts of an isolate that dies within the window are lost: statistics, never decisions.
 */
export class Gathered<K extends string> {
  private pending = new Map<K, number>();
  private flushing = false;
  private readonly send: (counts: [K, number][]) => Promise<void>;
  private readonly wait: (ms: number) => Promise<void>;
  private readonly windowMs: number;

  constructor(send: (counts: [K, number][]) => Promise<void>, wait: (ms: number) => Promise<void>, windowMs: number) {
    this.send = send;
    this.wait = wait;
    this.windowMs = windowMs;
  }

  /** Adds one; the first add of a window (`windowMs` long, default the constructor's) returns the flush to keep alive, later ones null. */
  add(key: K, windowMs: number = this.windowMs): Promise<void> | null {
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
    if (this.flushing) return null;
    this.flushing = true;
    return this.flush(windowMs);
  }

  private async flush(windowMs: number): Promise<void> {
    await this.wait(windowMs);
    const batch = [...this.pending];
    this.pending = new Map();
    this.flushing = false;
    // A failed send is dropped, never thrown into the request that kept it alive.
    if (batch.length) await this.send(batch).catch(() => {});
  }
}

/** A wait on a timer: the window of a Gathered in a Worker. */
export const timerWait = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));
