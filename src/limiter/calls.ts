// A Worker's calls at its key's object, the hot path: each is counted, the key listed as seen, the
// usage an answer's op carries kept (usage.ts), the ops run through the driver, what changed
// written (at once for a new limit or a later gate, else with the next flush), and a batch's reply
// built with the key's levels and, for a kept key, tickets. On a key whose tokens window leaves
// prompt-cache reads out, each cost is charged less the share answers show was read from the cache
// (cache-share.ts); where its provider gives back what an answer did not use of its reservation,
// the window is credited so (quota.ts giveBack). The object's RPC methods hand their calls here;
// time comes from `now`.
import type { StatedQuota } from "../providers/quota";
import type { Tokens } from "../usage/tokens";
import type { UsageRecord } from "../usage/types";
import { type CacheShare, charged, noShare, observe, shareOf } from "./cache-share";
import type { LimiterCore } from "./core";
import type { LimiterDriver } from "./driver";
import type { Listing } from "./listing";
import type { Applied } from "./session-stream";
import { applyStated } from "./stated";
import { giveBack } from "./quota";
import type { LimiterStore } from "./store";
import type { Telemetry } from "./telemetry";
import type { Ask } from "./tickets/policy";
import type { AcquireRequest, AcquireResult, KeyMeta, Op, SettleAnswer, SettleRequest } from "./types";
import type { KeyUsage } from "./usage";

export interface CallParts {
  core: LimiterCore;
  driver: LimiterDriver;
  /** Whether the key is kept, and writing what changed (store.ts). */
  store: Pick<LimiterStore, "proven" | "changed">;
  listing: Pick<Listing, "touch" | "meta">;
  telemetry: Pick<Telemetry, "called" | "moved">;
  usage: Pick<KeyUsage, "add">;
  now(): number;
  /** The key is proven: kept from now on (the object's). */
  prove(now: number): void;
  /** The quota its operator states for the key (`PROVIDERS`' quota): its windows start there (stated.ts). */
  stated(meta: KeyMeta): StatedQuota | null;
  /** Its tokens window leaves out prompt tokens read from the provider's cache (the row's `cacheReadsFree`). */
  cacheReadsFree?(meta: KeyMeta): boolean;
  /** What an answer drew, where the provider gives back the rest of a request's reservation (row-facts.ts); else null. */
  drawn?(meta: KeyMeta): ((t: Tokens) => number) | null;
}

export class Calls {
  #p: CallParts;
  /** In memory: a restart learns it again from the next answers, charging whole until then. */
  #share: CacheShare = noShare();

  constructor(parts: CallParts) {
    this.#p = parts;
  }

  /**
   * Applies a batch of ops, in order with one pump at the end. `calls`: how many calls brought them
   * (a session's later ops come on its stream, not in calls); `ask`: tickets an isolate asks for.
   */
  apply(meta: KeyMeta, ops: Op[], calls: number, ask?: Ask): Applied {
    const { core, driver, store } = this.#p;
    const now = this.#counted(ops.length, calls);
    // Only a request counts as the key being seen: a batch of releases is the end of old ones.
    // Windows started from a statement go with the next flush, as every batch's changes do (below).
    this.#seen(meta, now, ops.some((op) => op.t === "acquire"));
    // An answer's usage rides the op that ends it: counted once per lease, dated when it was made.
    for (const op of ops) {
      const usage = op.t === "release" ? op.usage : op.t === "settle" ? op.outcome.usage : undefined;
      if (usage && (op.t === "release" || op.t === "settle")) this.#count(op.id, usage, now - (op.ageMs ?? 0));
    }
    const before = core.cooldownUntil;
    const { results, changed, waiting } = driver.exchange(this.#charged(meta, ops, now));
    // Tickets only for a kept key: a restart must find them in its storage. The isolate compares its
    // requests' estimates with the ask's; the object reserves what they are charged.
    const ids = ask && store.proven ? driver.issue(this.#free(meta) ? { ...ask, cost: charged(this.#share, ask.cost, now) } : ask) : [];
    store.changed(changed || core.cooldownUntil > before);
    const tickets = ids.length > 0 ? { tickets: { ids, cost: ask!.cost, ...(ask!.out !== undefined && { out: ask!.out }), leaseTtlMs: core.config.leaseTtlMs, ...core.pacing() } } : {};
    return { reply: { results, queued: core.queue.size, room: Math.max(0, core.limitAt(now) - core.busy), epoch: core.epoch, ...tickets }, waiting };
  }

  acquire(req: AcquireRequest): Promise<AcquireResult> {
    const now = this.#counted(1);
    if (this.#seen(req, now, true)) this.#p.store.changed(false);
    const cost = this.#free(req) ? charged(this.#share, req.cost, now) : req.cost;
    const answer = this.#p.driver.acquire({ id: req.leaseId, cost, out: req.out, retry: req.retry, deadline: now + Math.max(0, req.waitMs), caller: req.caller, lane: req.priority, pooled: req.pooled, tier: req.tier });
    this.#p.telemetry.moved(now);
    return answer;
  }

  settle(leaseId: string, outcome: SettleRequest): SettleAnswer {
    const { core, driver, store } = this.#p;
    const now = this.#counted(1);
    if (outcome.usage) this.#count(leaseId, outcome.usage, now);
    const gate = core.cooldownUntil;
    const { changed, answer } = driver.settle(leaseId, outcome);
    store.changed(changed || core.cooldownUntil > gate);
    return answer;
  }

  release(leaseId: string, usage?: UsageRecord): boolean {
    const now = this.#counted(1);
    if (usage) this.#count(leaseId, usage, now);
    return this.#p.driver.release(leaseId);
  }

  renew(leaseId: string, cost?: number): boolean {
    const now = this.#counted(1);
    const meta = this.#p.listing.meta;
    return this.#p.driver.renew(leaseId, cost !== undefined && meta && this.#free(meta) ? charged(this.#share, cost, now) : cost);
  }

  cancel(leaseId: string): boolean {
    this.#counted(1);
    return this.#p.driver.cancel(leaseId);
  }

  /**
   * A call for the key (`asked`: a request, not the end of old ones): listed as seen, and for a
   * request its windows as its operator states them (stated.ts). True when a window changed.
   */
  #seen(meta: KeyMeta, now: number, asked: boolean): boolean {
    this.#p.listing.touch(meta, now, asked);
    return asked && applyStated(this.#p.core.quota, this.#p.stated(meta), now);
  }

  /**
   * One answer's usage (usage.ts), and its prompt's cache reads where the window leaves them out. It
   * only comes with a 2xx, which proves the key: proven first, so its row is written.
   */
  #count(leaseId: string, usage: UsageRecord, at: number): void {
    const p = this.#p;
    if (!p.store.proven) p.prove(p.now());
    const meta = p.listing.meta;
    const lease = p.core.lease(leaseId);
    p.usage.add(leaseId, meta?.key ?? "", lease?.caller, usage, at);
    if (!meta || !usage.tokens) return;
    if (this.#free(meta)) observe(this.#share, usage.tokens.input, usage.tokens.cached, at);
    // What the provider gave back of the request's reservation, back in the window (written with the next flush).
    const drawn = p.drawn?.(meta);
    if (drawn && lease?.mark && giveBack(p.core.quota, lease.mark.requests, drawn(usage.tokens), at)) p.store.changed(false);
  }

  /** What each cost is charged less of (the admin view's `cacheReadShare`); null on a key whose window counts cache reads. */
  cacheReadShare(now: number): number | null {
    const meta = this.#p.listing.meta;
    return meta && this.#free(meta) ? shareOf(this.#share, now) : null;
  }

  #free(meta: KeyMeta): boolean {
    return this.#p.cacheReadsFree?.(meta) ?? false;
  }

  /** Ops whose costs are charged less the key's cache share (as they are where nothing is free). */
  #charged(meta: KeyMeta, ops: Op[], now: number): Op[] {
    const s = this.#share;
    if (!this.#free(meta) || shareOf(s, now) === 0) return ops;
    return ops.map((op) =>
      op.t === "acquire" ? { ...op, req: { ...op.req, cost: charged(s, op.req.cost, now) } }
      : op.t === "use" ? { ...op, cost: charged(s, op.cost, now) }
      : op.t === "renew" && op.cost !== undefined ? { ...op, cost: charged(s, op.cost, now) }
      : op);
  }

  /** Counts hot-path calls and the operations they carry; returns the time now. */
  #counted(ops: number, calls = 1): number {
    this.#p.telemetry.called(calls, ops);
    return this.#p.now();
  }
}
