// The shared response cache (src/cache/): a stored answer takes no slot and no quota; a miss goes on
// and its answer is stored on its way back.
import { cacheStage } from "../../cache/stage";
import { cacheTenant } from "../../pools/stage";
import type { Stage } from "../call";

export const cached: Stage = (call, next) => {
  const { asked, pooled, env, settings } = call;
  const ctx = { bindings: { bucket: env.CACHE_BUCKET, shards: env.CACHE_SHARD }, config: settings.cache, bodyBudgetBytes: settings.gw.bodyBudgetBytes, statsMs: settings.statsMs, now: Date.now, waitUntil: call.waitUntil };
  return cacheStage(
    {
      ctx, method: asked.method, headers: call.req.headers, provider: asked.provider.name, flavour: asked.provider.flavour, rest: asked.rest, search: asked.incoming.search,
      // A virtual key reads its own answers (its pool's where it opts in); anyone else only the same credential's.
      tenant: pooled ? cacheTenant(pooled.vk, pooled.pool) : call.read.key.credentialHash,
      body: call.bytes, json: () => call.json, limitKey: call.key.key, deadline: asked.deadline,
    },
    next,
  );
};
