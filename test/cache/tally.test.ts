import { describe, expect, it } from "vitest";
import { COUNTED_NAMESPACES_MAX, OVERFLOW_NAMESPACE } from "../../src/cache/stats";
import { Tally } from "../../src/cache/tally";

describe("Tally: counts ride one call per window", () => {
  it("the first add starts the window; adds within it join the same batch; the next add starts another", async () => {
    const sent: unknown[] = [];
    let open!: () => void;
    const t = new Tally(async (c) => void sent.push(c), () => new Promise<void>((r) => (open = r)));
    const flush = t.add("a", "hit");
    expect(flush).toBeInstanceOf(Promise);
    expect(t.add("a", "hit")).toBeNull();
    expect(t.add("b", "miss")).toBeNull();
    expect(t.add("a", "collapsed")).toBeNull();
    open();
    await flush;
    expect(sent).toEqual([[["a", "hit", 2], ["b", "miss", 1], ["a", "collapsed", 1]]]);
    const next = t.add("a b:c", "bypass");
    open();
    await next;
    expect(sent[1]).toEqual([["a b:c", "bypass", 1]]);
  });

  it("a failed send is dropped, never thrown into the request", async () => {
    const t = new Tally(() => Promise.reject(new Error("down")), async () => {});
    await expect(t.add("a", "hit")).resolves.toBeUndefined();
  });

  it("a window keeps at most COUNTED_NAMESPACES_MAX namespaces: new labels past it are counted as the overflow one", async () => {
    const sent: [string, string, number][][] = [];
    let open!: () => void;
    const t = new Tally(async (c) => void sent.push(c), () => new Promise<void>((r) => (open = r)));
    const flush = t.add("ns-0", "miss");
    for (let i = 1; i < COUNTED_NAMESPACES_MAX + 50; i++) t.add(`ns-${i}`, "miss");
    t.add("ns-0", "hit"); // already kept: still its own
    t.add(`ns-${COUNTED_NAMESPACES_MAX + 7}`, "hit"); // past the bound: overflow
    open();
    await flush;
    const batch = sent[0]!;
    expect(new Set(batch.map(([ns]) => ns)).size).toBe(COUNTED_NAMESPACES_MAX + 1);
    expect(batch.reduce((n, [, , k]) => n + k, 0)).toBe(COUNTED_NAMESPACES_MAX + 52); // every add counted: none lost to the bound
    expect(batch).toContainEqual(["ns-0", "hit", 1]);
    expect(batch).toContainEqual([OVERFLOW_NAMESPACE, "miss", 50]);
    expect(batch).toContainEqual([OVERFLOW_NAMESPACE, "hit", 1]);
    // The next window starts empty.
    const next = t.add(`ns-${COUNTED_NAMESPACES_MAX + 9}`, "miss");
    open();
    await next;
    expect(sent[1]).toEqual([[`ns-${COUNTED_NAMESPACES_MAX + 9}`, "miss", 1]]);
  });
});
