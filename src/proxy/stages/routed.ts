// A pool's members, each with its own URL, credential and limiter (pools/stage.ts); a request that
// may not fall back from its tier reaches only members that sell it.
import { poolRoute } from "../../pools/stage";
import type { Dialect } from "../../providers/dialect";
import { offered } from "../../tiers/body";
import type { Stage } from "../call";

export const routed: Stage = async (call, next) => {
  const { pooled, tier } = call;
  if (!pooled) return next();
  const route = await poolRoute({
    pool: call.pool ?? pooled.pool, vk: pooled.vk, rest: call.asked.rest, search: call.asked.incoming.search, headers: call.headers, json: call.json,
    outMs: call.settings.gw.poolOutMs, limiterFor: call.limiterFor, waitUntil: call.waitUntil,
    ...(tier?.fallback === "none" && { serves: (d: Dialect) => offered(d.tiers, tier.asked, tier.model, tier.route) }),
  });
  if (route instanceof Response) return route;
  call.route = route;
  return next();
};
