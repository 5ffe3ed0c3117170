import { Channel } from "../../src/proxy/channel";
import type { ExchangeReply, KeyMeta, Op, OpResult } from "../../src/limiter/types";

type FakeStub = {
  acquire: (req: never) => Promise<unknown>;
  settle?: (id: string, o: never) => Promise<unknown>;
  release?: (id: string) => Promise<unknown>;
  renew?: (id: string) => Promise<unknown>;
  cancel?: (id: string) => Promise<unknown>;
};

/**
 * A fake stub's `exchange`, made of its single calls in order (as the object applies a batch):
 * lets a test script the object call by call and still go through the Worker's channel.
 */
export function withExchange<S extends FakeStub>(stub: S): S & { exchange: (meta: KeyMeta, ops: Op[]) => Promise<ExchangeReply> } {
  const one = async (meta: KeyMeta, op: Op): Promise<OpResult> => {
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
    }
  };
  return Object.assign(stub, {
    exchange: async (meta: KeyMeta, ops: Op[]) => {
      const results: OpResult[] = [];
      for (const op of ops) results.push(await one(meta, op));
      return { results, queued: 0 };
    },
  });
}

export const META: KeyMeta = { key: "k", provider: "openai", model: "m" };
/** A channel of the test's own (not the isolate's shared one) that never lingers. */
export const freshChannel = (meta: KeyMeta = META) => new Channel(meta, Date.now, 0);
