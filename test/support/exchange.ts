import { Channel } from "../../src/proxy/channel";
import { line, lines } from "../../src/limiter/lines";
import type { ExchangeReply, KeyMeta, Op, OpResult, SessionOp, SessionReply } from "../../src/limiter/types";

type FakeStub = {
  acquire: (req: never) => Promise<unknown>;
  settle?: (id: string, o: never) => Promise<unknown>;
  release?: (id: string) => Promise<unknown>;
  renew?: (id: string) => Promise<unknown>;
  cancel?: (id: string) => Promise<unknown>;
};

/** One op on a fake stub's single calls, as the object applies it. */
async function applyOne(stub: FakeStub, meta: KeyMeta, op: Op): Promise<OpResult> {
  switch (op.t) {
    case "acquire":
      return (await stub.acquire({ ...meta, ...op.req } as never)) as OpResult;
    case "settle":
      // The object answers a settle with its word on the retry; a stub that says nothing answers true.
      return ((await stub.settle?.(op.id, op.outcome as never)) as OpResult | undefined) ?? true;
    case "release":
      return Boolean(await stub.release?.(op.id));
    case "renew":
      return Boolean(await stub.renew?.(op.id));
    case "cancel":
      return Boolean(await stub.cancel?.(op.id));
    case "use":
      return true;
  }
}

/**
 * A fake stub's `exchange`, made of its single calls in order (as the object applies a batch):
 * lets a test script the object call by call and still go through the Worker's channel.
 */
export function withExchange<S extends FakeStub>(stub: S): S & { exchange: (meta: KeyMeta, ops: Op[]) => Promise<ExchangeReply> } {
  const one = (meta: KeyMeta, op: Op) => applyOne(stub, meta, op);
  return Object.assign(stub, {
    exchange: async (meta: KeyMeta, ops: Op[]) => {
      const results: OpResult[] = [];
      for (const op of ops) results.push(await one(meta, op));
      return { results, queued: 0 };
    },
  });
}

/**
 * A fake stub with both ways a request reaches its key's object: `exchange` (the isolate's
 * channel, when the key has room) and `session` (a busy queue).
 */
export function withBoth<S extends FakeStub>(stub: S) {
  return withSession(withExchange(stub));
}

/**
 * A fake stub's `session`, made of its single calls in order (as the object applies a session's
 * ops): lets a test script the object call by call and still go through the Worker's session.
 * A first acquire that answers at once (or fails at once: an overloaded object) is the call's own
 * result; one that takes longer is `queued`, answered down the stream, as the object does.
 */
export function withSession<S extends FakeStub>(stub: S): S & { session: (meta: KeyMeta, first: Op, more: ReadableStream<Uint8Array>) => Promise<SessionReply> } {
  const one = (meta: KeyMeta, op: Op) => applyOne(stub, meta, op);
  return Object.assign(stub, {
    session: async (meta: KeyMeta, first: Op, more: ReadableStream<Uint8Array>): Promise<SessionReply> => {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const out = writable.getWriter();
      const answer = (n: number, r: Promise<OpResult>) => r.then((v) => out.write(line({ n, r: v })), () => out.abort());
      const pending = one(meta, first);
      const SLOW = Symbol("slow");
      const now = await Promise.race([pending, new Promise<typeof SLOW>((r) => setTimeout(() => r(SLOW), 0))]);
      const firstDone = now === SLOW ? answer(0, pending) : Promise.resolve();
      const firstResult: OpResult = now === SLOW ? { queued: true } : now;
      void (async () => {
        const sent: Promise<unknown>[] = [firstDone];
        try {
          for await (const op of lines<SessionOp>(more)) {
            const r = one(meta, op);
            if (op.n !== undefined) sent.push(answer(op.n, r));
            else await r;
          }
        } finally {
          await Promise.all(sent);
          await out.close().catch(() => {});
        }
      })();
      return { results: [firstResult], queued: 0, answers: readable };
    },
  });
}

export const META: KeyMeta = { key: "k", provider: "openai", model: "m" };
/** A channel of the test's own (not the isolate's shared one) that never lingers. */
export const freshChannel = (meta: KeyMeta = META) => new Channel(meta, Date.now, 0);
