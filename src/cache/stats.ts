import type { CacheResult } from "./entry";

/** One namespace's numbers (from one shard, or summed over all of them). */
export interface NamespaceStats {
  namespace: string;
  /** Live (unexpired) entries and their bytes. */
  entries: number;
  bytes: number;
  hits: number;
  misses: number;
  collapsed: number;
  bypassed: number;
}

/** `GET /admin/cache`: the totals, then per namespace (largest first, at most NAMESPACES_MAX). */
export interface CacheStats extends Omit<NamespaceStats, "namespace"> {
  /** (hits + collapsed) / (hits + misses + collapsed): answers that made no upstream call of their own. */
  hitRatio: number | null;
  namespaces: NamespaceStats[];
  /** Namespaces past the bound, counted in the totals but not listed. */
  namespacesOmitted: number;
}

export const NAMESPACES_MAX = 1_000;

/**
 * A namespace is free text per request, and each new one would add counter rows forever: one
 * shard's counters, and one isolate's tally window, keep at most this many namespaces. Past it, new
 * labels are counted under OVERFLOW_NAMESPACE; the totals stay whole.
 */
export const COUNTED_NAMESPACES_MAX = 1_000;
/** Not a valid namespace (parentheses are not allowed in one), so no request can name it. */
export const OVERFLOW_NAMESPACE = "(overflow)";

/** The namespace a count is kept under: its own when already kept (`known`) or while there is room. */
export const countedAs = (namespace: string, known: boolean, namespaces: number): string =>
  known || namespaces < COUNTED_NAMESPACES_MAX ? namespace : OVERFLOW_NAMESPACE;

export const FIELD: Record<CacheResult, "hits" | "misses" | "collapsed" | "bypassed"> = { hit: "hits", miss: "misses", collapsed: "collapsed", bypass: "bypassed" };

export const emptyNamespace = (namespace: string): NamespaceStats => ({ namespace, entries: 0, bytes: 0, hits: 0, misses: 0, collapsed: 0, bypassed: 0 });

const NUMBERS = ["entries", "bytes", "hits", "misses", "collapsed", "bypassed"] as const;

export const hitRatio = (s: Pick<NamespaceStats, "hits" | "misses" | "collapsed">) => {
  const n = s.hits + s.misses + s.collapsed;
  return n > 0 ? (s.hits + s.collapsed) / n : null;
};

/** Sums the shards' per-namespace rows. */
export function mergeStats(shards: readonly NamespaceStats[][]): CacheStats {
  const by = new Map<string, NamespaceStats>();
  const total = emptyNamespace("");
  for (const rows of shards)
    for (const r of rows) {
      let s = by.get(r.namespace);
      if (!s) by.set(r.namespace, (s = emptyNamespace(r.namespace)));
      for (const f of NUMBERS) {
        s[f] += r[f];
        total[f] += r[f];
      }
    }
  const all = [...by.values()].sort((a, b) => b.bytes - a.bytes || a.namespace.localeCompare(b.namespace));
  const { namespace: _n, ...sums } = total;
  return { ...sums, hitRatio: hitRatio(total), namespaces: all.slice(0, NAMESPACES_MAX), namespacesOmitted: Math.max(0, all.length - NAMESPACES_MAX) };
}
