// A virtual key's provider batches and files (src/batches/): only its own, on the member that holds
// them; their results metered as they pass, recorded once answered.
import { batchStage } from "../../batches/stage";
import type { Stage } from "../call";

export const batches: Stage = async (call, next) => {
  const { pooled, asked } = call;
  if (!pooled) return next();
  const plan = await batchStage({
    env: call.env, vk: pooled.vk, pool: pooled.pool, provider: asked.provider.name, flavour: asked.provider.flavour, method: asked.method, rest: asked.rest,
    search: asked.incoming.searchParams, headers: call.req.headers, body: call.bytes, json: () => call.json, prices: call.settings.prices,
    here: `${asked.incoming.origin}/${asked.provider.name}`, waitUntil: call.waitUntil,
  });
  if (plan instanceof Response) return plan;
  if (!plan) return next();
  call.pool = plan.pool;
  // A batch's own calls are no answers: its results are metered as they are read.
  call.batch = true;
  return plan.finish(await next(), call.route?.served);
};
