// The Worker's side of the Directory's upstream counts (observe/upstream.ts says what is counted):
// gathered in the isolate, sent in one call a window, off the request path.
import { Gathered, timerWait } from "../gathered";
import { statusClass } from "../observe/upstream";
import { type Directory, directoryOf } from "./object";

/** An isolate's counts wait this long before one call to the Directory carries them all. */
export const UPSTREAM_FLUSH_MS = 2_000;

/** One gatherer per isolate (and Directory binding): counts are `<provider> <class>`. */
const gathered = new WeakMap<DurableObjectNamespace<Directory>, Gathered<string>>();

/**
 * Counts one attempt off the request path: the first of a window keeps the isolate's flush alive
 * with `waitUntil`. `windowMs`: STATS_FLUSH_MS when set, else UPSTREAM_FLUSH_MS.
 */
export function countUpstream(ns: DurableObjectNamespace<Directory>, waitUntil: (p: Promise<unknown>) => void, provider: string, status: number | null, windowMs?: number): void {
  let g = gathered.get(ns);
  if (!g) {
    const send = (batch: [string, number][]) =>
      directoryOf(ns).countUpstream(batch.map(([k, n]) => [k.slice(0, k.lastIndexOf(" ")), k.slice(k.lastIndexOf(" ") + 1), n] as [string, string, number]), Date.now());
    gathered.set(ns, (g = new Gathered<string>(send, timerWait, UPSTREAM_FLUSH_MS)));
  }
  const flush = g.add(`${provider} ${statusClass(status)}`, windowMs);
  if (flush) waitUntil(flush);
}
