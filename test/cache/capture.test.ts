import { describe, expect, it } from "vitest";
import { capture } from "../../src/cache/capture";
import { HeldBudget } from "../../src/proxy/held";

const enc = (s: string) => new TextEncoder().encode(s);
function source(parts: string[], fail = false) {
  let i = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < parts.length) c.enqueue(enc(parts[i++]!));
      else if (fail) c.error(new Error("reset"));
      else c.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}
function captured(parts: string[], max: number, fail = false, budget = Number.POSITIVE_INFINITY) {
  const s = source(parts, fail);
  const held = new HeldBudget();
  const growing = held.growing(budget);
  let copy: Uint8Array | null | undefined;
  const out = capture(s.stream, max, growing, (c) => (copy = c));
  return { out: new Response(out), copy: () => copy, cancelled: s.cancelled, held, growing };
}

describe("capture: the caller gets every byte; the copy only when whole", () => {
  it("a body that ends: the copy is the same bytes", async () => {
    const c = captured(["data: a\n\n", "data: [DONE]\n\n"], 1_000);
    expect(await c.out.text()).toBe("data: a\n\ndata: [DONE]\n\n");
    expect(new TextDecoder().decode(c.copy()!)).toBe("data: a\n\ndata: [DONE]\n\n");
  });

  it("larger than max: the caller still gets it all, no copy", async () => {
    const c = captured(["12345", "67890"], 7);
    expect(await c.out.text()).toBe("1234567890");
    expect(c.copy()).toBeNull();
  });

  it("a body that fails midway: the caller sees the error, no copy", async () => {
    const c = captured(["a", "b"], 1_000, true);
    await expect(c.out.text()).rejects.toThrow("reset");
    expect(c.copy()).toBeNull();
  });

  it("a caller that leaves: the source is cancelled, no copy", async () => {
    const c = captured(["a", "b", "c"], 1_000);
    const reader = c.out.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(c.copy()).toBeNull();
    expect(c.cancelled()).toBe(true);
  });

  it("the copy is held in the budget until released; a copy given up gives its bytes back at once", async () => {
    const kept = captured(["abc", "de"], 1_000);
    await kept.out.text();
    expect(kept.held.bytes).toBe(5);
    kept.growing.release();
    expect(kept.held.bytes).toBe(0);
    const big = captured(["12345", "67890"], 7);
    await big.out.text();
    expect(big.held.bytes).toBe(0);
    const broken = captured(["a", "b"], 1_000, true);
    await expect(broken.out.text()).rejects.toThrow("reset");
    expect(broken.held.bytes).toBe(0);
  });

  it("past the budget: capture stops, the caller still gets every byte, nothing held", async () => {
    const c = captured(["aaaa", "bbbb", "cccc", "dd"], 1_000, false, 10);
    expect(await c.out.text()).toBe("aaaabbbbccccdd");
    expect(c.copy()).toBeNull();
    expect(c.held.bytes).toBe(0);
    const fits = captured(["aaaa", "bbbb", "cc"], 1_000, false, 10);
    await fits.out.text();
    expect(new TextDecoder().decode(fits.copy()!)).toBe("aaaabbbbcc");
  });

  it("no body: an empty copy", () => {
    let copy: Uint8Array | null | undefined;
    expect(capture(null, 10, new HeldBudget().growing(10), (c) => (copy = c))).toBeNull();
    expect(copy).toEqual(new Uint8Array(0));
  });
});
