// A request's session at its key's object (the Worker's side is src/proxy/session.ts). Its first op
// is answered in the reply, as in an exchange; every later op of the same request (its settles and
// release, renewals, a retry's acquire) is read from the Worker's stream as it writes them, in
// order, and applied alone. So a request is one call, whatever the queue: a queued acquire's grant
// and the answers to the ops the Worker waits for (numbered) go down the stream the reply carries,
// one JSON line each (lines.ts), and the stream closes once the Worker's has ended and all are sent.
import { line, lines } from "./lines";
import type { AcquireResult, ExchangeReply, Op, OpResult, SessionAnswer, SessionOp, SessionReply } from "./types";

/** A batch of ops applied: the reply, and the answers to come of its acquires still in line (by op index). */
export interface Applied {
  reply: ExchangeReply;
  waiting: Map<number, Promise<AcquireResult>>;
}

/** Applies ops in order; `calls`: how many calls brought them (the first op's, 1; those on the stream, 0). */
export type Apply = (ops: Op[], calls: number) => Applied;

type Answer = (n: number, r: OpResult | Promise<AcquireResult>) => void;

export function serveSession(apply: Apply, first: Op, more: ReadableStream<Uint8Array>): SessionReply {
  const { readable, writable } = new IdentityTransformStream(); // the runtime's byte pipe (proxy/session.ts)
  const out = writable.getWriter();
  const sent: Promise<unknown>[] = [];
  const answer: Answer = (n, r) => sent.push(Promise.resolve(r).then((v) => out.write(line({ n, r: v } satisfies SessionAnswer))).catch(() => {}));
  const { reply, waiting } = apply([first], 1);
  const queued = waiting.get(0);
  if (queued) answer(0, queued);
  void follow(apply, more, answer).finally(async () => {
    await Promise.all(sent);
    await out.close().catch(() => {});
  });
  return { ...reply, answers: readable };
}

/** The rest of a session: each op applied as it comes. A stream that breaks is a Worker gone: its leases expire. */
async function follow(apply: Apply, more: ReadableStream<Uint8Array>, answer: Answer): Promise<void> {
  try {
    for await (const op of lines<SessionOp>(more)) {
      const { reply, waiting } = apply([op], 0);
      if (op.n !== undefined) answer(op.n, waiting.get(0) ?? reply.results[0]!);
    }
  } catch {
    // Nothing to answer: the request that wrote it has gone.
  }
}
