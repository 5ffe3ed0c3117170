import { describe, expect, it } from "vitest";
import { HeldBudget, heldBytes, isolateHeld, readBody } from "../../src/proxy/held";

// Each test has its own budget: nothing another test (or request) holds in this isolate leaks in.
describe("the isolate's budget of held bytes", () => {
  it("takes bodies chunk by chunk up to the budget, refuses a chunk past it, and takes again once one is let go", () => {
    const h = new HeldBudget();
    const a = h.body(100);
    const b = h.body(100);
    expect(a.grow(60)).toBe(true);
    expect(b.grow(40)).toBe(true);
    expect(b.grow(1)).toBe(false);
    expect(h.bytes).toBe(100);
    a.release();
    a.release(); // idempotent
    expect(h.bytes).toBe(40);
    expect(a.grow(1)).toBe(false); // released: it grows no more
    const c = h.body(100);
    expect(c.grow(60)).toBe(true);
    b.release();
    c.release();
    expect(h.bytes).toBe(0);
  });

  it("always takes a body alone, however large", () => {
    const h = new HeldBudget();
    const big = h.body(100);
    expect(big.grow(300)).toBe(true);
    expect(big.grow(200)).toBe(true);
    expect(h.bytes).toBe(500);
    expect(h.body(100).grow(1)).toBe(false);
    big.release();
    expect(h.bytes).toBe(0);
  });

  it("a growing copy takes each chunk only while it fits, never alone past the budget, and gives all back once", () => {
    const h = new HeldBudget();
    const body = h.body(100);
    body.grow(30);
    const copy = h.growing(100);
    expect(copy.grow(50)).toBe(true);
    expect(copy.grow(30)).toBe(false); // 110 would not fit: nothing taken
    expect(h.bytes).toBe(80);
    expect(h.body(100).grow(30)).toBe(false); // the copy counts against new bodies too
    copy.release();
    copy.release();
    expect(h.bytes).toBe(30);
    expect(copy.grow(1)).toBe(false);
    body.release();
    expect(h.growing(100).grow(101)).toBe(false);
    expect(h.bytes).toBe(0);
  });

  it("heldBytes is the isolate's budget", () => {
    expect(heldBytes()).toBe(isolateHeld.bytes);
  });
});

describe("the body stage (issue 33): a body counts as it arrives, and has BODY_TIMEOUT_MS to come", () => {
  const LIMITS = { maxBodyBytes: 1_000, bodyBudgetBytes: 100, bodyTimeoutMs: 200 };
  const enc = new TextEncoder();
  const post = (body: BodyInit, headers: Record<string, string> = {}) => new Request("http://x", { method: "POST", body, headers });
  /** A body that sends `first` and then nothing more until `more` is called. */
  function trickle(first: string) {
    let ctrl!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => ((ctrl = c), c.enqueue(enc.encode(first))) });
    return { body, more: (s: string) => ctrl.enqueue(enc.encode(s)), end: () => ctrl.close() };
  }

  it("reads a body up to MAX_BODY_BYTES; one byte over is 413, whether or not content-length says so", async () => {
    const h = new HeldBudget();
    const read = await readBody(post("hello"), true, { ...LIMITS, maxBodyBytes: 5 }, h);
    expect(read instanceof Response ? null : new TextDecoder().decode(read.bytes)).toBe("hello");
    expect(h.bytes).toBe(5);
    if (!(read instanceof Response)) read.release();
    expect(h.bytes).toBe(0);
    expect(((await readBody(post("hello!"), true, { ...LIMITS, maxBodyBytes: 5 }, h)) as Response).status).toBe(413);
    expect(((await readBody(post("hi", { "content-length": "999" }), true, { ...LIMITS, maxBodyBytes: 5 }, h)) as Response).status).toBe(413);
    expect(h.bytes).toBe(0);
  });

  it("a body that does not arrive within BODY_TIMEOUT_MS is 408 request_timeout, and holds nothing after", async () => {
    const h = new HeldBudget();
    const t = trickle("x".repeat(10));
    const started = Date.now();
    const res = (await readBody(post(t.body, { "content-length": "1000" }), true, LIMITS, h)) as Response;
    expect(res.status).toBe(408);
    expect(((await res.json()) as { error: { type: string; message: string } }).error).toMatchObject({ type: "request_timeout", message: expect.stringMatching(/BODY_TIMEOUT_MS/) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(h.bytes).toBe(0);
  });

  it("a body that has declared a large length but not sent it holds only what came: others still fit", async () => {
    const h = new HeldBudget();
    // Five strangers declare the most a body may be and send ten bytes each.
    const slow = Array.from({ length: 5 }, () => trickle("x".repeat(10)));
    const reads = slow.map((t) => readBody(post(t.body, { "content-length": "1000" }), true, { ...LIMITS, bodyTimeoutMs: 5_000 }, h));
    await new Promise((r) => setTimeout(r, 20));
    expect(h.bytes).toBe(50);
    const other = await readBody(post("y".repeat(40)), true, LIMITS, h);
    expect(other).not.toBeInstanceOf(Response);
    // Past the budget as chunks arrive: 503 overloaded, the rest read and dropped, nothing kept.
    slow[0]!.more("z".repeat(30));
    slow[0]!.end();
    const refused = (await reads[0]!) as Response;
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    for (const t of slow.slice(1)) t.end();
    await Promise.all(reads.slice(1));
    expect(h.bytes).toBe(40 + 40);
  });
});
