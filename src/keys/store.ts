// Reaching the virtual key store: which instance of `VirtualKeys` holds a key, and a call to it that
// either answers in time or fails as one kind of error, so the request path answers 503, never 500.
import { gatewayError } from "../proxy/errors";
import { SHARDS } from "./format";
import type { VirtualKeys } from "./object";

/** The one instance of before the shards: keys minted without a tag, which nothing adds to any more. */
export const LEGACY_HOME = "virtual-keys";
/** The instance of one of the SHARDS shards. */
export const homeOf = (shard: number): string => `${LEGACY_HOME}-${shard.toString(16)}`;
/** Every instance that may hold a key: the listing and a name's uniqueness read them. */
export const HOMES: readonly string[] = [LEGACY_HOME, ...Array.from({ length: SHARDS }, (_, i) => homeOf(i))];

/** Longer than any healthy store call; past it the caller is told to come back. */
export const STORE_TIMEOUT_MS = 3_000;

/** The store did not answer, or failed (overloaded, a broken connection, the time-out). */
export class KeyStoreUnavailable extends Error {}

/** 503 key_store_unavailable: nothing was sent; come back in a second. */
export function keyStoreUnavailable(err: KeyStoreUnavailable, headers: Record<string, string> = {}): Response {
  return gatewayError("key_store_unavailable", `${err.message}; nothing was sent, try again shortly`, { "retry-after": "1", ...headers });
}

type Store = DurableObjectStub<VirtualKeys>;

/** One call to the instance `home`, bounded by `ms`; whatever goes wrong comes out as KeyStoreUnavailable. */
export async function storeCall<T>(ns: DurableObjectNamespace<VirtualKeys>, home: string, call: (store: Store) => Promise<T>, ms: number = STORE_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new KeyStoreUnavailable("the key store did not answer in time")), ms)));
  try {
    return await Promise.race([call(ns.get(ns.idFromName(home))), late]);
  } catch (err) {
    throw err instanceof KeyStoreUnavailable ? err : new KeyStoreUnavailable("the key store failed");
  } finally {
    clearTimeout(timer);
  }
}
