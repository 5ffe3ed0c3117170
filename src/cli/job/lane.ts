// The job's synchronous lane: lines the batches did not answer (and lines no batch API takes) are
// pushed here as the job learns of them, and sent down the session's synchronous path at once,
// while the batches still running go on.
import type { Item } from "../input";
import type { Session } from "../session";
import type { OutputLine } from "../types";

export class SyncLane {
  /** Lines pushed to it in this run. */
  pushed = 0;
  private queue: (Item | OutputLine)[] = [];
  private wake: (() => void) | null = null;
  private closed = false;
  private readonly done: Promise<void>;

  constructor(s: Session) {
    this.done = s.sync(this.items());
  }

  push(...items: (Item | OutputLine)[]): void {
    this.pushed += items.length;
    this.queue.push(...items);
    this.wake?.();
  }

  /** No more lines will come; resolves once every line pushed has its answer (or the run stopped). */
  finish(): Promise<void> {
    this.closed = true;
    this.wake?.();
    return this.done;
  }

  private async *items(): AsyncGenerator<Item | OutputLine> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = null;
    }
  }
}
