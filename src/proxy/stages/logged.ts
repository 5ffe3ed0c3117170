// The gateway's own errors on a request it read (a 502, a 503 of its own) are logged once, with the
// key they happened on (observe/worker-log.ts); never a credential.
import { logGatewayError } from "../../observe/worker-log";
import type { Stage } from "../call";

export const logged: Stage = async (call, next) => {
  const res = await next();
  return call.key ? logGatewayError(call.env, call.key.key, res) : res;
};
