import type { CacheResult } from "./entry";
import { countedAs } from "./stats";

/** Counts wait this long in the isolate before one object call carries them all. */
export const TALLY_FLUSH_MS = 1_000;

type Counts = [namespace: string, result: CacheResult, n: number][];

/**
 * The cache's hit/miss counters, gathered per isolate and sent in one call a second, so that a hit
 * costs no object call of its own. Counts of an isolate that dies within that second are lost:
 * they are statistics, never decisions.
 */
export class Tally {
  private pending = new Map<string, number>();
  /** This window's namespaces: past the bound, new labels are counted as the overflow namespace. */
  private namespaces = new Set<string>();
  private flushing = false;

  constructor(private readonly send: (counts: Counts) => Promise<void>, private readonly wait: (ms: number) => Promise<void>) {}

  /** Adds one; the first add of a window hands back the flush to keep alive (waitUntil), later ones null. */
  add(label: string, result: CacheResult): Promise<void> | null {
    const namespace = countedAs(label, this.namespaces.has(label), this.namespaces.size);
    this.namespaces.add(namespace);
    const k = `${result} ${namespace}`;
    this.pending.set(k, (this.pending.get(k) ?? 0) + 1);
    if (this.flushing) return null;
    this.flushing = true;
    return this.flush();
  }

  private async flush(): Promise<void> {
    await this.wait(TALLY_FLUSH_MS);
    const batch: Counts = [...this.pending].map(([k, n]) => {
      const at = k.indexOf(" ");
      return [k.slice(at + 1), k.slice(0, at) as CacheResult, n];
    });
    this.pending = new Map();
    this.namespaces = new Set();
    this.flushing = false;
    if (batch.length) await this.send(batch).catch(() => {});
  }
}
