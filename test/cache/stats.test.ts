import { describe, expect, it } from "vitest";
import { NAMESPACE } from "../../src/cache/directives";
import { COUNTED_NAMESPACES_MAX, countedAs, emptyNamespace, mergeStats, NAMESPACES_MAX, OVERFLOW_NAMESPACE } from "../../src/cache/stats";

describe("mergeStats", () => {
  it("sums the shards per namespace and in all; the hit ratio counts collapsed answers as served", () => {
    const s = mergeStats([
      [{ ...emptyNamespace("a"), entries: 2, bytes: 100, hits: 3, misses: 1 }],
      [{ ...emptyNamespace("a"), entries: 1, bytes: 50, collapsed: 4 }, { ...emptyNamespace("b"), bytes: 10, misses: 2, bypassed: 5 }],
    ]);
    expect(s).toMatchObject({ entries: 3, bytes: 160, hits: 3, misses: 3, collapsed: 4, bypassed: 5, namespacesOmitted: 0 });
    expect(s.hitRatio).toBeCloseTo(7 / 10);
    expect(s.namespaces.map((n) => [n.namespace, n.entries, n.bytes])).toEqual([["a", 3, 150], ["b", 0, 10]]);
  });

  it("no requests yet: ratio null; past the bound, namespaces are counted, not listed", () => {
    expect(mergeStats([]).hitRatio).toBeNull();
    const many = Array.from({ length: NAMESPACES_MAX + 3 }, (_, i) => ({ ...emptyNamespace(`n${i}`), bytes: i, entries: 1 }));
    const s = mergeStats([many]);
    expect(s.namespaces).toHaveLength(NAMESPACES_MAX);
    expect(s.namespacesOmitted).toBe(3);
    expect(s.entries).toBe(NAMESPACES_MAX + 3);
    expect(s.namespaces[0]!.namespace).toBe(`n${NAMESPACES_MAX + 2}`);
  });

  it("countedAs: a namespace keeps its own counters while there is room or once it has them; past the bound, the overflow one", () => {
    expect(countedAs("a", false, 0)).toBe("a");
    expect(countedAs("a", false, COUNTED_NAMESPACES_MAX - 1)).toBe("a");
    expect(countedAs("a", false, COUNTED_NAMESPACES_MAX)).toBe(OVERFLOW_NAMESPACE);
    expect(countedAs("a", true, COUNTED_NAMESPACES_MAX + 5)).toBe("a");
    expect(OVERFLOW_NAMESPACE).not.toMatch(NAMESPACE); // no request can name it
  });
});
