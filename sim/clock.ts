// A virtual clock and event loop: every timer of a simulated run lives here, and time jumps from
// one event to the next. After each event the microtasks it started run to the end before the
// next event, so a run is the same every time for the same seed.
import type { Timers } from "../src/limiter/waiters";

interface Event {
  at: number;
  seq: number;
  fn: () => void;
}

/** 2026-11-23T00:00:00Z: resets and retry-after dates are read as epoch times, so start at one. */
export const EPOCH = Date.UTC(2026, 10, 23);

const drain = () => new Promise<void>((r) => setImmediate(r));

export class Clock {
  now = EPOCH;
  private heap: Event[] = [];
  private seq = 0;
  private cancelled = new Set<number>();
  /** Events run so far (the simulator's own cost). */
  events = 0;

  at(at: number, fn: () => void): number {
    const e = { at: Math.max(at, this.now), seq: ++this.seq, fn };
    this.heap.push(e);
    this.up(this.heap.length - 1);
    return e.seq;
  }

  after(ms: number, fn: () => void): number {
    return this.at(this.now + Math.max(0, ms), fn);
  }

  cancel(handle: number): void {
    this.cancelled.add(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => this.after(ms, resolve));
  }

  readonly timers: Timers = { set: (fn, ms) => this.after(ms, fn), clear: (h) => this.cancel(h as number) };

  /** Runs events in time order until none is left (or `until`), settling promises between them. */
  async run(until = Number.POSITIVE_INFINITY): Promise<void> {
    await drain();
    while (this.heap.length > 0) {
      const e = this.pop();
      if (this.cancelled.delete(e.seq)) continue;
      if (e.at > until) break;
      this.now = e.at;
      this.events++;
      e.fn();
      await drain();
    }
  }

  private less(a: Event, b: Event): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Event {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
