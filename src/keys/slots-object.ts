import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { Slots } from "./slots";

export type SlotAnswer = { granted: true } | { granted: false; retryAfterMs: number };

/** What a refused waiter is told: the key's own requests hold every slot, and one ends about this soon. */
const RETRY_AFTER_MS = 1_000;

/**
 * One per virtual key with a `maxConcurrency`: its slots (slots.ts). Nothing is stored: a restart
 * forgets the leases, and the Workers holding them take them back when they renew (within a
 * third of LEASE_TTL_MS), so the cap may be passed by what was in flight only for that long.
 * A pending timer keeps the object in memory while anything is held or waiting.
 */
export class KeySlots extends DurableObject<Env> {
  /** Injected in tests. */
  now: () => number = () => Date.now();
  private slots = new Slots();
  private cap = 1;
  private ttlMs = 60_000;
  private waiters = new Map<string, (a: SlotAnswer) => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  async acquire(id: string, cap: number, waitMs: number, ttlMs: number): Promise<SlotAnswer> {
    this.settings(cap, ttlMs);
    const now = this.now();
    this.pump(now);
    const asked = this.slots.ask(id, cap, now + Math.max(0, waitMs), now, ttlMs);
    if (asked === "granted") {
      this.wake();
      return { granted: true };
    }
    if (asked === "refused") return { granted: false, retryAfterMs: RETRY_AFTER_MS };
    const answer = new Promise<SlotAnswer>((resolve) => this.waiters.set(id, resolve));
    this.wake();
    return answer;
  }

  async release(id: string): Promise<void> {
    this.slots.release(id);
    this.answer(id, { granted: false, retryAfterMs: 0 });
    this.pump(this.now());
  }

  async renew(id: string, cap: number, ttlMs: number): Promise<boolean> {
    this.settings(cap, ttlMs);
    const kept = this.slots.renew(id, cap, this.now(), ttlMs);
    this.wake();
    return kept;
  }

  /** How many are in flight and waiting (tests, and the admin's view of a key). */
  async count(): Promise<{ inFlight: number; queued: number }> {
    this.pump(this.now());
    return { inFlight: this.slots.inFlight, queued: this.slots.queued };
  }

  /** The key's record says the cap; the last one asked with is what a release pumps by. */
  private settings(cap: number, ttlMs: number): void {
    this.cap = cap;
    this.ttlMs = ttlMs;
  }

  private pump(now: number): void {
    const { granted, timedOut } = this.slots.pump(this.cap, now, this.ttlMs);
    for (const id of granted) this.answer(id, { granted: true });
    for (const id of timedOut) this.answer(id, { granted: false, retryAfterMs: RETRY_AFTER_MS });
    this.wake();
  }

  private answer(id: string, a: SlotAnswer): void {
    const resolve = this.waiters.get(id);
    if (!resolve) return;
    this.waiters.delete(id);
    resolve(a);
  }

  /** One timer, for the next expiry or deadline; none while nothing is held or waiting. */
  private wake(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const next = this.slots.nextWake();
    if (next !== null) this.timer = setTimeout(() => this.pump(this.now()), Math.max(0, next - this.now()));
  }
}

export function keySlotsOf(env: Env, vk: { name: string; createdAt: string }): DurableObjectStub<KeySlots> {
  return env.KEY_SLOTS.get(env.KEY_SLOTS.idFromName(`${vk.name}\n${vk.createdAt}`));
}
