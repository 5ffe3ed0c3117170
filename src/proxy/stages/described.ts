// What the body asks, read once (call.ts parses it on first use): its key, cost, model and what goes
// upstream (proxy/request.ts), the dialect its answers are read in, and its service tier, decided
// once (tiers/plan.ts) against every dialect that may serve it: a pool's members', else the route's.
import { DIALECTS } from "../../providers/dialects";
import { chooseTier } from "../../tiers/choose";
import { planTier, unchosen } from "../../tiers/plan";
import { priceOf, tierPrice } from "../../usage/prices";
import type { Stage } from "../call";
import { gatewayError } from "../errors";
import { upstreamHeaders } from "../forward";
import { describe } from "../request";

export const described: Stage = async (call, next) => {
  const { asked, who, pooled } = call;
  const read = await describe(asked.provider, asked.headers, asked.incoming, asked.rest, call.bytes, call.json, asked.label, call.proven, call.settings.prices);
  call.read = read;
  call.dialect = DIALECTS[asked.provider.dialect];
  call.key = { key: read.key.key, provider: asked.provider.name, model: read.key.model };
  // The tier it goes at: its body's field, else its header, its virtual key's, its lane's (TIERS); else its provider's default.
  let chosen = chooseTier({ body: read.tier, header: call.ask.tier, key: pooled?.vk.tier, lane: who.priority, lanes: call.settings.tiers });
  if (!chosen) {
    const listed = pooled?.vk.budget ? priceOf(call.settings.prices, asked.provider.name, read.model) : null;
    const rest = unchosen(call.dialect, !!listed, (t) => tierPrice(listed!, t, call.dialect.tiers?.ratio[t]) !== null);
    chosen = rest.chosen;
    call.servedAt = rest.servedAt;
  }
  if (chosen) {
    const dialects = pooled ? pooled.pool.members.map((m) => DIALECTS[m.provider.dialect]) : [call.dialect];
    const planned = planTier(chosen, call.ask.fallback, read.model, read.route, dialects, call.json);
    if (typeof planned === "string") return gatewayError("invalid_request", planned);
    call.tier = planned.plan;
    call.servedAt = planned.servedAt;
  }
  call.trace?.described(read.model, read.key.key, who, pooled && { pool: pooled.pool.name, vk: pooled.vk.name });
  call.headers = upstreamHeaders(call.req.headers);
  return next();
};
