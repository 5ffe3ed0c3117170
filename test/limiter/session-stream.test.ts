// A request's session at its key's object (src/limiter/session-stream.ts): the first op answered in
// the reply, later ops read from the Worker's stream, answers to numbered ones written back in lines.
import { describe, expect, it, vi } from "vitest";
import { line, lines } from "../../src/limiter/lines";
import { type Applied, serveSession } from "../../src/limiter/session-stream";
import type { AcquireResult, Op, OpResult, SessionAnswer, SessionOp } from "../../src/limiter/types";

const GRANT: AcquireResult = { granted: true, leaseId: "r:1", waitedMs: 0, leaseTtlMs: 60_000, limit: 4 };
const acquire: Op = { t: "acquire", req: { leaseId: "r:1", cost: 10, retry: false, waitMs: 5_000 } };

/** An `apply` that answers each op with `result(op)` (a promise: still in line), recording what it was given. */
function applier(result: (op: Op) => OpResult | Promise<AcquireResult>) {
  const applied: [string[], number][] = [];
  const apply = (ops: Op[], calls: number): Applied => {
    applied.push([ops.map((o) => o.t), calls]);
    const r = result(ops[0]!);
    const waiting = new Map<number, Promise<AcquireResult>>();
    if (r instanceof Promise) waiting.set(0, r);
    return { reply: { results: [r instanceof Promise ? { queued: true } : r], queued: 0 }, waiting };
  };
  return { apply, applied };
}

/** The Worker's end of a session's stream. */
function worker() {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const w = writable.getWriter();
  return { more: readable, write: (op: SessionOp | string) => w.write(typeof op === "string" ? new TextEncoder().encode(op) : line(op)), end: () => w.close() };
}

async function all(answers: ReadableStream<Uint8Array>): Promise<SessionAnswer[]> {
  const got: SessionAnswer[] = [];
  for await (const a of lines<SessionAnswer>(answers)) got.push(a);
  return got;
}

describe("serveSession", () => {
  it("answers the first op in the reply and each numbered later op down the stream, applying each as it comes", async () => {
    const { apply, applied } = applier((op) => (op.t === "acquire" ? GRANT : op.t === "settle" ? { retry: "wait" } : true));
    const w = worker();
    const reply = serveSession(apply, acquire, w.more);
    expect(reply.results).toEqual([GRANT]);
    const answers = all(reply.answers);
    await w.write({ t: "settle", id: "r:1", outcome: {} as never, n: 1 });
    await w.write({ t: "renew", id: "r:1" });
    await w.write({ t: "release", id: "r:1", n: 2 });
    await w.end();
    expect(await answers).toEqual([{ n: 1, r: { retry: "wait" } }, { n: 2, r: true }]);
    expect(applied).toEqual([[["acquire"], 1], [["settle"], 0], [["renew"], 0], [["release"], 0]]);
  });

  it("sends a queued acquire's grant as answer 0 when it comes, and a queued retry's under its number; the stream waits for them", async () => {
    let grantFirst!: (r: AcquireResult) => void;
    let grantRetry!: (r: AcquireResult) => void;
    const first = new Promise<AcquireResult>((r) => (grantFirst = r));
    const retry = new Promise<AcquireResult>((r) => (grantRetry = r));
    const { apply, applied } = applier((op) => (op.t !== "acquire" ? true : op.req.leaseId === "r:1" ? first : retry));
    const w = worker();
    const reply = serveSession(apply, acquire, w.more);
    expect(reply.results).toEqual([{ queued: true }]);
    const answers = all(reply.answers);
    await w.write({ t: "acquire", req: { ...acquire.req, leaseId: "r:2" }, n: 3 } as SessionOp);
    await w.end();
    await vi.waitFor(() => expect(applied).toHaveLength(2));
    // Answers go in the order they come, not by number.
    grantRetry({ ...GRANT, leaseId: "r:2" });
    grantFirst(GRANT);
    expect(await answers).toEqual([{ n: 3, r: { ...GRANT, leaseId: "r:2" } }, { n: 0, r: GRANT }]);
  });

  it("stops at a line that does not parse, applies nothing after it, and still closes its answers", async () => {
    const { apply, applied } = applier(() => true);
    const w = worker();
    const reply = serveSession(apply, acquire, w.more);
    const answers = all(reply.answers);
    await w.write({ t: "renew", id: "r:1", n: 1 });
    await w.write("{not json\n");
    void w.write({ t: "release", id: "r:1", n: 2 }).catch(() => {});
    expect(await answers).toEqual([{ n: 1, r: true }]);
    expect(applied.map(([ops]) => ops[0])).toEqual(["acquire", "renew"]);
  });
});
