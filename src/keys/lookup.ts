// The Worker's side of the virtual key store: each isolate remembers an answer for a second, so a
// steady caller costs one store call a second, and a revoked key is refused within about that.
import type { Env } from "../env";
import { keyHash } from "./keys";
import { type VirtualKey, virtualKeysOf } from "./object";

/** How long an isolate trusts what the store said about a key (revocation takes at most this, plus a check's interval). */
export const KEY_TTL_MS = 1_000;
/** How often a request that waits (queued, or between attempts) asks whether its key still stands. */
export const RECHECK_MS = 250;
const KEPT = 1_024;

const seen = new Map<string, { vk: VirtualKey | null; at: number }>();

/** The stored key for a presented `sgk-` key, or null (unknown or revoked). */
export async function resolveKey(env: Env, key: string, now: () => number = Date.now): Promise<{ vk: VirtualKey | null; hash: string }> {
  const hash = await keyHash(env, key);
  return { vk: await byHash(env, hash, now), hash };
}

async function byHash(env: Env, hash: string, now: () => number): Promise<VirtualKey | null> {
  const hit = seen.get(hash);
  if (hit && now() - hit.at < KEY_TTL_MS) return hit.vk;
  const vk = await virtualKeysOf(env.VIRTUAL_KEYS).lookup(hash);
  seen.delete(hash);
  if (seen.size >= KEPT) seen.delete(seen.keys().next().value as string);
  seen.set(hash, { vk, at: now() });
  return vk;
}

/**
 * While a request waits, checks every RECHECK_MS that its key still stands; `revoked` aborts when
 * it does not. The checks run in the request's own context (a timer of its own), and share the
 * isolate's answers above. Call the returned stop when the request no longer waits.
 */
export function watchKey(env: Env, hash: string, now: () => number = Date.now): { revoked: AbortSignal; stop: () => void } {
  const ac = new AbortController();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    byHash(env, hash, now)
      .then((vk) => {
        if (vk === null) ac.abort(new Error("revoked"));
      })
      .catch(() => {})
      .finally(() => (busy = false));
  }, RECHECK_MS);
  return { revoked: ac.signal, stop: () => clearInterval(timer) };
}

/** A key just deleted through this isolate is refused here at once. */
export function forgetKeys(): void {
  seen.clear();
}
