// The gateway's machine as the benchmark runs it: wrangler dev on a small, shared box, where the
// Worker and its objects share one thread. Every request's and every attempt's work waits its turn
// behind the others' there, so a burst of arrivals delays the sends behind it, and sends delayed
// together reach the provider together. Without it the simulator's gateway costs nothing but its
// network legs, and a measured run on two loaded cores does not look like its simulation.

import type { Clock } from "./clock.ts";

export class Machine {
  private freeAt = Number.NEGATIVE_INFINITY;

  /**
   * `msPerUnit`: the thread's time (on a CPU, or waiting for one) per unit of work: one unit per
   * caller request as it arrives, one per attempt (half before its send, half after its answer).
   * The benchmark measures it: its workerd time over requests plus attempts.
   */
  constructor(private clock: Clock, readonly msPerUnit: number) {}

  /** Waits for the thread, in arrival order, then holds it for `units` of work. */
  async work(units: number): Promise<void> {
    if (!(this.msPerUnit > 0)) return;
    const start = Math.max(this.clock.now, this.freeAt);
    this.freeAt = start + units * this.msPerUnit;
    await this.clock.sleep(this.freeAt - this.clock.now);
  }
}
