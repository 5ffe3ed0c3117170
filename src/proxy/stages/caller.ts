// Who asks: the caller and lane (`x-slotgate-caller`, `x-slotgate-priority`, a gateway token), the
// tier its headers ask for, and its virtual key, whose pool's members send it under its name.
import { virtualKeyStage, whoFor } from "../../pools/stage";
import { tierAsk } from "../../tiers/choose";
import type { Stage } from "../call";
import { whoIsAsking } from "../caller";
import { gatewayError } from "../errors";

export const caller: Stage = async (call, next) => {
  const who = await whoIsAsking(call.req.headers, call.env.GATEWAY_TOKENS);
  if (typeof who === "string") return gatewayError("invalid_request", who);
  const ask = tierAsk(call.req.headers);
  if (typeof ask === "string") return gatewayError("invalid_request", ask);
  call.ask = ask;
  // A virtual key: its pool's members send it, under its name; an unknown one goes nowhere.
  const keyed = await virtualKeyStage(call.env, call.asked, call.settings.table, call.found);
  if (keyed.kind === "refused") return keyed.res;
  if (keyed.kind === "pool") {
    call.pooled = keyed;
    call.who = whoFor(keyed.vk, who);
  } else call.who = who;
  return next();
};
