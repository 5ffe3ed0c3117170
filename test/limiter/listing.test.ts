// A key's listing (src/limiter/listing.ts): who it is for, when it was last asked, and when the
// Directory is told.
import { describe, expect, it } from "vitest";
import type { DirectoryEntry } from "../../src/directory/object";
import { Listing, REPORT_MS, REPORT_RETRY_MS } from "../../src/limiter/listing";

const META = { key: "openai:k:0", provider: "openai", model: "gpt-4o-mini" };

/** A listing whose reports are recorded; `fail` makes the next sends fail (a rejection or a throw). */
function listing(o: { kept?: boolean; fail?: "reject" | "throw" } = {}) {
  const sent: DirectoryEntry[] = [];
  const pending: Promise<unknown>[] = [];
  const state = { kept: o.kept ?? true, fail: o.fail };
  const l = new Listing({
    meta: null,
    lastSeen: null,
    send: (e) => {
      sent.push(e);
      if (state.fail === "throw") throw new Error("no binding");
      return state.fail === "reject" ? Promise.reject(new Error("down")) : Promise.resolve();
    },
    waitUntil: (p) => void pending.push(p),
    kept: () => state.kept,
    levels: () => ({ limit: 8, inFlight: 2, queued: 1 }),
  });
  return { l, sent, state, settled: () => Promise.all(pending) };
}

describe("Listing", () => {
  it("tells the Directory at once on the first call, then at most every REPORT_MS, with the key's numbers", async () => {
    const { l, sent, settled } = listing();
    l.touch({ ...META, leaseId: "a" } as never, 1_000, true);
    l.touch(META, 1_000 + REPORT_MS - 1, true);
    l.touch(META, 1_000 + REPORT_MS, false);
    await settled();
    expect(sent).toEqual([
      { ...META, limit: 8, inFlight: 2, queued: 1, lastSeen: 1_000 },
      { ...META, limit: 8, inFlight: 2, queued: 1, lastSeen: 1_000 + REPORT_MS },
    ]);
    // Only who the key is for is kept of the first call, and only a request moves lastSeen.
    expect(l.meta).toEqual(META);
    expect(l.lastSeen).toBe(1_000 + REPORT_MS - 1);
  });

  it("keeps who the first call said, and what the last life wrote", () => {
    const l = new Listing({ meta: META, lastSeen: 5, send: async () => {}, waitUntil: () => {}, kept: () => false, levels: () => ({ limit: 1, inFlight: 0, queued: 0 }) });
    l.touch({ key: "other", provider: "anthropic", model: "m" }, 10, false);
    expect(l.meta).toEqual(META);
    expect(l.lastSeen).toBe(5);
  });

  it("lists no key that is not kept; once kept, the next call tells the Directory", async () => {
    const { l, sent, state, settled } = listing({ kept: false });
    l.touch(META, 1_000, true);
    expect(sent).toEqual([]);
    state.kept = true;
    l.report(1_001);
    await settled();
    expect(sent.map((e) => e.lastSeen)).toEqual([1_001]);
  });

  for (const fail of ["reject", "throw"] as const)
    it(`tries a failed report (${fail}) again after REPORT_RETRY_MS, never failing the call`, async () => {
      const { l, sent, state, settled } = listing({ fail });
      l.touch(META, 0, true);
      await settled();
      l.touch(META, REPORT_RETRY_MS - 1, true);
      state.fail = undefined;
      l.touch(META, REPORT_RETRY_MS, true);
      l.touch(META, REPORT_RETRY_MS + 1, true);
      await settled();
      expect(sent.map((e) => e.lastSeen)).toEqual([0, REPORT_RETRY_MS]);
    });
});
