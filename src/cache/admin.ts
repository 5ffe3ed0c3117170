import type { Env } from "../env";
import { NAMESPACE, NAMESPACE_RULE } from "./directives";
import { allShards } from "./object";
import { type CacheStats, mergeStats } from "./stats";
import { CacheStore } from "./store";

/** `GET /admin/cache`: every shard's numbers, summed. */
export async function cacheStats(env: Env): Promise<CacheStats> {
  return mergeStats(await Promise.all(allShards(env.CACHE_SHARD).map((s) => s.stats())));
}

/**
 * `DELETE /admin/cache[?namespace=]`: the objects by prefix (so none the index missed survive),
 * then the shards' index rows. Counters stay: they are the history of hits and misses.
 */
export async function purgeCache(env: Env, namespace: string | null): Promise<{ namespace: string | null; deleted: number } | string> {
  if (namespace !== null && !NAMESPACE.test(namespace)) return `namespace ${NAMESPACE_RULE}`;
  const deleted = await new CacheStore(env.CACHE_BUCKET).purge(namespace);
  await Promise.all(allShards(env.CACHE_SHARD).map((s) => s.forget(namespace)));
  return { namespace, deleted };
}
