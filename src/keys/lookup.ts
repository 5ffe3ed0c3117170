// The Worker's side of the virtual key store. A key is checked here first: a forged or malformed one
// (and an old-format one once the old instance is empty) is refused with no store call at all. A
// real one is looked up in its own shard; each isolate remembers an answer for a second, so a steady
// caller costs one store call a second, and a revoked key is refused within about that.
import type { Env } from "../env";
import { remember } from "../bounded";
import { readKey } from "./format";
import { keyHash, verifiedHash } from "./keys";
import { legacyRefused, sawLegacy } from "./legacy";
import type { VirtualKey } from "./object";
import { homeOf, LEGACY_HOME, storeCall } from "./store";

/** How long an isolate trusts what the store said about a key (revocation takes at most this, plus a check's interval). */
export const KEY_TTL_MS = 1_000;
/** How often a request that waits (queued, or between attempts) asks whether its key still stands. */
export const RECHECK_MS = 250;
const KEPT = 1_024;

/** Where a key's row is: its HMAC, and the store instance (store.ts) that holds it. */
export interface KeyRef {
  hash: string;
  home: string;
}

/** Why a key was refused: not minted here (no store asked), old-format with none left (no store asked), or not in the store. */
export type Refusal = "forged" | "legacy" | "unknown";

export type Resolved = { kind: "key"; vk: VirtualKey; ref: KeyRef } | { kind: "refused"; why: Refusal };

const seen = new Map<string, { vk: VirtualKey | null; at: number }>();

/**
 * The stored key for a presented `sgk-` key, or why it is refused. Throws KeyStoreUnavailable when
 * the store has to be asked and does not answer in time (store.ts).
 */
export async function resolveKey(env: Env, key: string, now: () => number = Date.now): Promise<Resolved> {
  const presented = readKey(key);
  let ref: KeyRef;
  if (presented.format === "malformed") return { kind: "refused", why: "forged" };
  if (presented.format === "legacy") {
    if (legacyRefused(now())) return { kind: "refused", why: "legacy" };
    ref = { hash: await keyHash(env, key), home: LEGACY_HOME };
  } else {
    const hash = await verifiedHash(env, key, presented);
    if (!hash) return { kind: "refused", why: "forged" };
    ref = { hash, home: homeOf(presented.shard) };
  }
  const vk = await byRef(env, ref, now);
  return vk ? { kind: "key", vk, ref } : { kind: "refused", why: "unknown" };
}

async function byRef(env: Env, ref: KeyRef, now: () => number): Promise<VirtualKey | null> {
  const hit = seen.get(ref.hash);
  if (hit && now() - hit.at < KEY_TTL_MS) return hit.vk;
  const found = await storeCall(env.VIRTUAL_KEYS, ref.home, (s) => s.lookup(ref.hash));
  if (ref.home === LEGACY_HOME) sawLegacy(found.empty, now());
  remember(seen, ref.hash, { vk: found.key, at: now() }, KEPT);
  return found.key;
}

/**
 * While a request waits, checks every RECHECK_MS that its key still stands; `revoked` aborts when
 * it does not. The checks run in the request's own context (a timer of its own), and share the
 * isolate's answers above; a check that fails is no news. Call the returned stop when the request
 * no longer waits.
 */
export function watchKey(env: Env, ref: KeyRef, now: () => number = Date.now): { revoked: AbortSignal; stop: () => void } {
  const ac = new AbortController();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    byRef(env, ref, now)
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
