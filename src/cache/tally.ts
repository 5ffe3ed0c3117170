import { Gathered } from "../gathered";
import type { CacheResult } from "./entry";
import { countedAs } from "./stats";

/** Counts wait this long in the isolate before one object call carries them all. */
export const TALLY_FLUSH_MS = 1_000;

type Counts = [namespace: string, result: CacheResult, n: number][];

/**
 * The cache's hit/miss counters, gathered per isolate and sent in one call a second (gathered.ts),
 * so that a hit costs no object call of its own. A window keeps a bounded set of namespaces.
 */
export class Tally {
  /** This window's namespaces: past the bound, new labels are counted as the overflow namespace. */
  private namespaces = new Set<string>();
  private counts: Gathered<string>;

  constructor(send: (counts: Counts) => Promise<void>, wait: (ms: number) => Promise<void>) {
    this.counts = new Gathered<string>(
      (batch) => {
        this.namespaces = new Set();
        return send(batch.map(([k, n]) => {
          const at = k.indexOf(" ");
          return [k.slice(at + 1), k.slice(0, at) as CacheResult, n];
        }));
      },
      wait,
      TALLY_FLUSH_MS,
    );
  }

  /** Adds one; the first add of a window (`windowMs`, default TALLY_FLUSH_MS) hands back the flush to keep alive (waitUntil), later ones null. */
  add(label: string, result: CacheResult, windowMs?: number): Promise<void> | null {
    const namespace = countedAs(label, this.namespaces.has(label), this.namespaces.size);
    this.namespaces.add(namespace);
    return this.counts.add(`${result} ${namespace}`, windowMs);
  }
}
