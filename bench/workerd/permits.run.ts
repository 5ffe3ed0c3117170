// Permits per second one key's Limiter object grants and takes back, inside workerd, by RPC:
// - `single`: each permit costs three calls (acquire, settle, release), as before batching;
// - `paired`: one call per permit, carrying its acquire and the previous permit's settle-and-release
//   (what a busy isolate's channel sends: each acquire takes the finished answers with it);
// - `batched`: acquires, and settle-and-releases, in batches of BATCH (many isolates' worth);
// - `sessioned`: one session a permit (proxy/session.ts), as a request makes it while its key's
//   queue is busy: its acquire on the call, its settle-and-release on the session's stream.
// LOOPS callers run at once. Prints one `PERMITS {...}` line; the test checks only that every
// permit was granted and handed back (the figure is for the benchmark, not an assertion).
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import type { KeyMeta, Op, SettleRequest } from "../../src/limiter/types";
import { Session } from "../../src/proxy/session";

const MS = Number(globalThis.process?.env?.PERMITS_MS ?? 3_000);
const LOOPS = 16;
const BATCH = 16;
const ok = (now: number): SettleRequest => {
  const reading = { limit: 1e9, remaining: 1e9 - 1, resetAt: now + 60_000 };
  return { cls: "success", status: 200, info: { retryAfterMs: null, requests: reading, tokens: reading }, latencyMs: 50, attempt: 1, final: true, release: true };
};

let keys = 0;
async function key() {
  const meta: KeyMeta = { key: `openai:permits-${++keys}:0000000000000000`, provider: "openai", model: "m" };
  const stub = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
  await stub.configure({ maxConcurrency: 100_000, limit: 100_000 });
  // A new key lets its first request go alone until it is answered.
  await stub.acquire({ ...meta, leaseId: "probe", cost: 40, retry: false, waitMs: 10_000 });
  await stub.settle("probe", ok(Date.now()));
  return { meta, stub };
}

type Run = { permits: number; perSec: number; inFlight: number };
type Key = Awaited<ReturnType<typeof key>>;

/**
 * LOOPS callers on a fresh key for MS: each turn of `turn` grants and hands back some permits and
 * returns how many; `last` runs once per caller at the end (to hand back what is still held).
 */
async function measure(turn: (k: Key, next: () => string, held: string[]) => Promise<number>, last?: (k: Key, held: string[]) => Promise<unknown>): Promise<Run> {
  const k = await key();
  let permits = 0;
  let seq = 0;
  const next = () => `l${seq++}`;
  const end = Date.now() + MS;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      const held: string[] = [];
      while (Date.now() < end) {
        const n = await turn(k, next, held); // not `permits += await ...`: that reads permits before the await
        permits += n;
      }
      await last?.(k, held);
    }),
  );
  const secs = (Date.now() - started) / 1000;
  return { permits, perSec: permits / secs, inFlight: (await k.stub.state()).concurrency.inFlight };
}

const acquireOp = (id: string): Op => ({ t: "acquire", req: { leaseId: id, cost: 40, retry: false, waitMs: 10_000 } });

/**
 * Whether an exchange's acquires were all granted: at once, or after waiting in line with `acquire`
 * on the same id, as the Worker does (a key opens over its first answers, whatever its configured
 * limit: an acquire may find it full).
 */
async function grantedAll({ meta, stub }: Key, ids: string[], results: unknown[]): Promise<boolean> {
  const got = await Promise.all(
    results.map((r, i) => (typeof r === "object" && r !== null && "queued" in r ? stub.acquire({ ...meta, leaseId: ids[i]!, cost: 40, retry: false, waitMs: 10_000 }) : r)),
  );
  return got.every((r) => typeof r === "object" && r !== null && "granted" in r && r.granted);
}

/** Three calls a permit: acquire, settle, release. */
const single = () =>
  measure(async ({ meta, stub }, next) => {
    const id = next();
    const r = await stub.acquire({ ...meta, leaseId: id, cost: 40, retry: false, waitMs: 10_000 });
    if (!r.granted) throw new Error("refused");
    await stub.settle(id, { ...ok(Date.now()), release: false });
    await stub.release(id);
    return 1;
  });

/** One call a permit: its acquire, with the previous permit's settle-and-release ahead of it. */
const paired = () =>
  measure(
    async (k, next, held) => {
      const id = next();
      const done: Op[] = held.splice(0).map((h) => ({ t: "settle", id: h, outcome: ok(Date.now()) }));
      const got = await k.stub.exchange(k.meta, [...done, acquireOp(id)]);
      if (!(await grantedAll(k, [id], got.results.slice(-1)))) throw new Error("refused");
      held.push(id);
      return 1;
    },
    ({ meta, stub }, held) => stub.exchange(meta, held.map((h): Op => ({ t: "settle", id: h, outcome: ok(Date.now()) }))),
  );

/** BATCH acquires in one call, then their BATCH settle-and-releases in another. */
const batched = () =>
  measure(async (k, next) => {
    const ids = Array.from({ length: BATCH }, next);
    const got = await k.stub.exchange(k.meta, ids.map(acquireOp));
    if (!(await grantedAll(k, ids, got.results))) throw new Error("refused");
    await k.stub.exchange(k.meta, ids.map((id): Op => ({ t: "settle", id, outcome: ok(Date.now()) })));
    return BATCH;
  });

/** One session a permit: the call carries its acquire; its settle-and-release goes down the stream, which then ends. */
const sessioned = () =>
  measure(async ({ meta, stub }, next) => {
    const id = next();
    const s = new Session();
    const listening: Promise<unknown>[] = [];
    const reply = await stub.session(meta, acquireOp(id), s.more);
    // An acquire that waits in line has its grant come down the stream.
    const first = reply.results[0];
    const queued = typeof first === "object" && "queued" in first ? s.first() : null;
    s.listen(reply.answers, (p) => listening.push(p));
    const got = queued ? await queued : first;
    if (!(typeof got === "object" && "granted" in got && got.granted)) throw new Error("refused");
    await s.tell({ t: "settle", id, outcome: ok(Date.now()) });
    s.close();
    await Promise.all(listening); // the object's answers end once it has read the request's stream to its end
    return 1;
  });

it("one key's limiter, by RPC inside workerd: every permit granted and handed back", async () => {
  const s = await single();
  const p = await paired();
  const b = await batched();
  const x = await sessioned();
  console.log(`PERMITS ${JSON.stringify({ loops: LOOPS, batch: BATCH, ms: MS, single: s, paired: p, batched: b, sessioned: x })}`);
  for (const r of [s, p, b, x]) expect(r.permits).toBeGreaterThan(0);
  expect([s.inFlight, p.inFlight, b.inFlight, x.inFlight]).toEqual([0, 0, 0, 0]);
});
