import { describe, expect, it } from "vitest";
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
});
