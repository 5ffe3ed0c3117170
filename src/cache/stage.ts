import { isInference } from "../providers/endpoints";
import type { FlavourName } from "../providers/table";
import { gatewayError } from "../proxy/errors";
import { isolateHeld } from "../proxy/held";
import type { CacheConfig } from "./config";
import { capture } from "./capture";
import { cachePlan, type Use } from "./directives";
import { ageSeconds, type CacheResult, cacheStatus, complete, storableHeaders, usable } from "./entry";
import { cacheKey, semanticHeaders, SHARDS, shardOf } from "./key";
import { type CacheShard, type Claim, type Landed, shardStub } from "./object";
import { CacheStore, type Stored } from "./store";
import { Tally } from "./tally";
import { timerWait } from "../gathered";

export interface CacheBindings {
  bucket: R2Bucket;
  shards: DurableObjectNamespace<CacheShard>;
}

/** What the cache works with, the same for every request of an isolate but its `waitUntil`. */
export interface CacheContext {
  bindings: CacheBindings;
  config: CacheConfig;
  /** BODY_BUDGET_BYTES: the copy of an answer being stored counts against the isolate's budget of held bytes. */
  bodyBudgetBytes: number;
  /** STATS_FLUSH_MS when set: how long the isolate gathers its counts before one call sends them (default TALLY_FLUSH_MS). */
  statsMs?: number;
  now: () => number;
  waitUntil: (p: Promise<unknown>) => void;
}

/** One request as the cache sees it: read and resolved, before it goes near the key's limiter. */
export interface CacheRequest {
  ctx: CacheContext;
  method: string;
  headers: Headers;
  provider: string;
  /** The API family the route speaks: with the method and `rest`, whether the request is inference (only inference is cached). */
  flavour: FlavourName;
  /** The upstream path after the provider segment, as sent, without the query string. */
  rest: string;
  /** The query string (`?...` or empty): part of the key. */
  search: string;
  /** Whose entries these are: the credential's hash, or a virtual key (its pool where it shares: pools/stage.ts cacheTenant). */
  tenant: string;
  /** The body as sent, and its JSON (the request's own parse, read only where the cache is in play). */
  body: Uint8Array;
  json: () => unknown;
  /** The rate-limit key, named on answers its limiter never saw. */
  limitKey: string;
  /** The request's own deadline: a leader's waiters wait for it until then plus a stream's grace; a waiter waits at most until its own. */
  deadline: number;
}

/** A leader's answer may still be streaming at its deadline; its waiters give it this much longer. */
export const STREAM_GRACE_MS = 60_000;

type Fwd = "miss" | "request" | "stale";

/**
 * The cache stage: answer from a stored entry (no slot, no quota, the limiter never hears of it),
 * or call `forward` (the limiter and upstream) and store a whole 2xx answer on its way to the caller.
 * Identical misses share one upstream call through the key's shard.
 */
export async function cacheStage(r: CacheRequest, forward: () => Promise<Response>): Promise<Response> {
  const plan = cachePlan((n) => r.headers.get(n), isInference(r.flavour, r.method, r.rest), r.ctx.config);
  if (typeof plan === "string") return gatewayError("invalid_request", plan);
  if (!plan.use) {
    // Every answer marked bypass is counted as one (the counts ride the isolate's one call a second, tally.ts).
    tally(r, plan.namespace, "bypass");
    return mark(await forward(), "bypass", cacheStatus({ fwd: "bypass" }));
  }

  const key = await cacheKey({
    provider: r.provider, method: r.method, path: `${r.rest}${r.search}`, tenant: r.tenant, namespace: plan.namespace, sample: plan.sample,
    headers: semanticHeaders((n) => r.headers.get(n)), body: r.body, json: r.json(),
  });
  const shard = shardStub(r.ctx.bindings.shards, shardOf(key));
  const store = new CacheStore(r.ctx.bindings.bucket);
  const count = (result: CacheResult) => tally(r, plan.namespace, result);
  const go = (fwd: Fwd, flight: string | null) => forwardAndStore(r, plan, key, shard, store, forward, fwd, flight);

  let fwd: Fwd = plan.read ? "miss" : "request";
  if (plan.read) {
    const got = await read(store, plan, key, r.ctx.now());
    if ("hit" in got) {
      count("hit");
      return replay(r, got.hit, "hit", "miss");
    }
    if (got.stale) fwd = "stale";
  }
  if (plan.only) {
    count("miss");
    return mark(gatewayError("cache_miss", "nothing stored for this request, and replay only (x-slotgate-cache: only) keeps it from going upstream", { "x-slotgate-key": r.limitKey }), "miss", cacheStatus({ fwd }));
  }
  // A refresh stores without waiting on anyone; a no-store request never leads (it would store nothing for its waiters).
  if (!plan.read || !plan.write) {
    count("miss");
    return plan.write ? go(fwd, null) : mark(await forward(), "miss", cacheStatus({ fwd }));
  }

  let claim: Claim | null = null;
  try {
    // A waiter stops at its own deadline, without the grace: a collapsed answer starts only once the
    // leader's has ended, so waiting longer would start this caller's answer past its deadline.
    const until = { lead: r.deadline + STREAM_GRACE_MS, wait: r.deadline };
    claim = await shard.claim(key, plan.maxAgeS === null ? null : r.ctx.now() - plan.maxAgeS * 1_000, until);
  } catch {
    claim = null; // the shard is unreachable: answer as if alone
  }
  if (claim?.role === "lead") {
    count("miss");
    return go(fwd, claim.flight);
  }
  if (claim && (claim.role === "fresh" || claim.landing === "stored")) {
    const got = await read(store, plan, key, r.ctx.now());
    if ("hit" in got) {
      const result = claim.role === "fresh" ? "hit" : "collapsed";
      count(result);
      return replay(r, got.hit, result, fwd);
    }
  }
  // The leader failed, or what it stored is gone: this request goes upstream itself.
  count("miss");
  return go(fwd, null);
}

/** One per isolate and shard namespace: counts ride one call a second to a shard (any: the admin sums them all). */
const tallies = new WeakMap<DurableObjectNamespace<CacheShard>, Tally>();

function tally(r: CacheRequest, namespace: string, result: CacheResult): void {
  const ns = r.ctx.bindings.shards;
  let t = tallies.get(ns);
  if (!t) tallies.set(ns, (t = new Tally((c) => shardStub(ns, Math.floor(Math.random() * SHARDS)).count(c), timerWait)));
  const flush = t.add(namespace, result, r.ctx.statsMs);
  if (flush) r.ctx.waitUntil(flush);
}

/** A usable entry, or whether there was one too old for the request's max-age. A store that fails reads as a miss. */
async function read(store: CacheStore, plan: Use, key: string, now: number): Promise<{ hit: Stored } | { stale: boolean }> {
  let got: Stored | null;
  try {
    got = await store.get(plan.namespace, key);
  } catch {
    return { stale: false };
  }
  if (!got) return { stale: false };
  if (usable(got.meta, now, plan.maxAgeS)) return { hit: got };
  await got.body.cancel().catch(() => {});
  return { stale: now < got.meta.expiresAt };
}

function replay(r: CacheRequest, hit: Stored, result: "hit" | "collapsed", fwd: Fwd): Response {
  const headers = new Headers(hit.meta.headers);
  headers.set("age", String(ageSeconds(hit.meta, r.ctx.now())));
  headers.set("x-slotgate-key", r.limitKey);
  headers.set("x-slotgate-attempts", "0");
  headers.set("x-slotgate-queue-ms", "0");
  const status = result === "hit" ? cacheStatus({ hit: true }) : cacheStatus({ fwd, collapsed: true });
  return mark(new Response(hit.body, { status: hit.meta.status, headers }), result, status);
}

async function forwardAndStore(
  r: CacheRequest, plan: Use, key: string, shard: DurableObjectStub<CacheShard>, store: CacheStore,
  forward: () => Promise<Response>, fwd: Fwd, flight: string | null,
): Promise<Response> {
  let res: Response;
  try {
    res = await forward();
  } catch (err) {
    if (flight) r.ctx.waitUntil(shard.land(key, flight, null).catch(() => {}));
    throw err;
  }
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  const storable = res.status >= 200 && res.status < 300 && !(declared > r.ctx.config.maxBytes) && !res.headers.has("x-slotgate-error");
  if (!storable) {
    if (flight) r.ctx.waitUntil(shard.land(key, flight, null).catch(() => {}));
    return mark(res, "miss", cacheStatus({ fwd }));
  }
  let ended!: (copy: Uint8Array | null) => void;
  const copied = new Promise<Uint8Array | null>((resolve) => (ended = resolve));
  const type = res.headers.get("content-type");
  const headers = storableHeaders(res.headers);
  // The copy is held in the isolate's budget from its first byte until it is in R2 (or dropped).
  const held = isolateHeld.growing(r.ctx.bodyBudgetBytes);
  r.ctx.waitUntil(copied.then(async (copy) => {
    let entry: Landed | null = null;
    if (copy && complete(copy, type)) {
      const storedAt = r.ctx.now();
      const expiresAt = storedAt + plan.ttlS * 1_000;
      try {
        await store.put(plan.namespace, key, copy, { storedAt, expiresAt, status: res.status, headers });
        entry = { namespace: plan.namespace, bytes: copy.byteLength, storedAt, expiresAt };
      } catch {
        entry = null;
      }
    }
    held.release();
    if (flight || entry) await shard.land(key, flight, entry).catch(() => {});
  }));
  const out = new Response(capture(res.body, r.ctx.config.maxBytes, held, ended), res);
  return mark(out, "miss", cacheStatus({ fwd, stored: true }));
}

function mark(res: Response, result: CacheResult, status: string): Response {
  let out = res;
  try {
    out.headers.set("x-slotgate-cache", result);
  } catch {
    out = new Response(res.body, res); // immutable headers (a fetched Response): copy them once
    out.headers.set("x-slotgate-cache", result);
  }
  out.headers.set("cache-status", status);
  return out;
}
