// Stored responses and files an inference body names by id (src/stored/): a virtual key reaches
// only those it made, on the member that holds them; a response it makes is recorded as it passes.
import { storedStage } from "../../stored/stage";
import type { Stage } from "../call";

export const stored: Stage = async (call, next) => {
  const { pooled, asked } = call;
  if (!pooled || call.batch) return next();
  const plan = await storedStage({
    env: call.env, vk: pooled.vk, pool: pooled.pool, provider: asked.provider.name, flavour: asked.provider.flavour, method: asked.method, rest: asked.rest,
    json: () => call.json, waitUntil: call.waitUntil,
  });
  if (plan instanceof Response) return plan;
  if (!plan) return next();
  call.pool = plan.pool;
  return plan.finish(await next(), call.route?.served);
};
