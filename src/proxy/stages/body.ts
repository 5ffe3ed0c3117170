// The body, read as it arrives and counted in the isolate's budget (proxy/held.ts); held until the
// request has ended.
import type { Stage } from "../call";
import { readBody } from "../held";

export const body: Stage = async (call, next) => {
  const held = await readBody(call.req, call.asked.hasBody, call.settings.gw);
  if (held instanceof Response) return held;
  call.bytes = held.bytes;
  try {
    return await next();
  } finally {
    held.release();
  }
};
