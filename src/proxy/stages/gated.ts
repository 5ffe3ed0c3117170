// A capped virtual key holds one of its slots (keys/gate.ts) from here until its answer has ended;
// while it waits, a pooled request hears of its key's revocation (keys/lookup.ts) and is refused.
import { gateStage } from "../../keys/gate";
import { watchKey } from "../../keys/lookup";
import type { Stage } from "../call";
import { gatewayError } from "../errors";

export const gated: Stage = async (call, next) => {
  const { pooled } = call;
  if (!pooled) return next();
  const watch = watchKey(call.env, pooled.ref);
  call.stop = watch.revoked;
  let res: Response;
  try {
    const waiting = AbortSignal.any([call.signal, watch.revoked]);
    res = await gateStage({ env: call.env, vk: pooled.vk, deadline: call.asked.deadline, signal: waiting, waitUntil: call.waitUntil, now: Date.now }, next);
  } finally {
    watch.stop();
  }
  // Stopped while waiting: refused. An answer that came in the meantime is the caller's.
  return watch.revoked.aborted && res.status === 499 ? gatewayError("unauthorized", "this virtual key was revoked") : res;
};
