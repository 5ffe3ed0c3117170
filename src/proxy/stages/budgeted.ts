// A virtual key with a budget reserves the most the request can cost (budget/worst.ts), at the
// dearest price it may be charged at (the tiers it may be served at; a pool's members, each at its
// own provider's price for the model), before anything is sent; each answer is metered
// (usage/meter.ts) into the ledger and, for a budget, settles it at the member and tier that served.
// Whatever was not metered settles when the request has ended.
import { pricing } from "../../budget/priceable";
import { budgetStage } from "../../budget/stage";
import { worstCase } from "../../budget/worst";
import { dearest, type Price, priceOf, tierPrice } from "../../usage/prices";
import { Meter, type UsageRecord } from "../../usage/meter";
import type { Call, Stage } from "../call";

export const budgeted: Stage = async (call, next) => {
  const { asked, read, dialect } = call;
  const vk = call.pooled?.vk;
  const { price, noPrice, unlisted } = vk?.budget ? priced(call) : UNPRICED;
  const unknownTier = read.unknownTier ?? noPrice;
  const budget = await budgetStage(call.env, vk, {
    model: unlisted ?? read.model, price, rest: asked.rest,
    pricing: () => pricing({ flavour: asked.provider.flavour, method: asked.method, rest: asked.rest, json: call.json, model: read.model, ...(unknownTier !== null && { tier: { name: unknownTier, priced: false } }) }),
    worst: () => worstCase(call.json, call.bytes.byteLength, price!, read.model),
  }, call.waitUntil);
  if (budget instanceof Response) return budget;
  call.charges = budget ?? undefined;
  const span = call.trace;
  const counted = span ? (r: UsageRecord, whole: boolean) => (budget?.counted(r, whole), span.usage(r)) : budget?.counted;
  const meter = new Meter({
    provider: asked.provider.name, model: read.model, prices: call.settings.prices, strip: read.sent.strip, usageAt: dialect.usage.at, usageHeaders: dialect.usage.headers,
    counted, op: call.op, start: call.start, facts: span?.facts, tiers: dialect.tiers,
  });
  // A batch's own calls are no answers: its results are metered as they are read (src/batches/).
  if (!call.batch) call.meter = meter;
  try {
    return await next();
  } finally {
    budget?.after(meter.used);
  }
};

interface Priced {
  price: Price | null;
  /** A tier it may be served at that has no price. */
  noPrice: string | null;
  /** The model with no price, where a pool's member names it otherwise (`bedrock:<its id>`). */
  unlisted: string | null;
}

const UNPRICED: Priced = { price: null, noPrice: null, unlisted: null };

/**
 * The dearest price an answer may be charged at, as the meter will price it: each target's (a pool
 * member of another provider at its own provider and model, any other at the route's), at each tier
 * it may be served at (the request's, or standard where its dialect sells none), at the route's
 * ratios; else the model or tier that has no price: nothing may go where nothing would be charged.
 */
function priced(call: Call): Priced {
  const { asked, read } = call;
  const targets = call.route?.targets?.() ?? [];
  const prices: Price[] = [];
  for (const t of targets.length ? targets : [undefined]) {
    const as = t?.priceAs ?? { provider: asked.provider.name, model: read.model };
    const listed = priceOf(call.settings.prices, as.provider, as.model);
    if (!listed) return { ...UNPRICED, unlisted: t?.priceAs ? `${as.provider}:${as.model}` : null };
    const tiers = (t?.dialect ?? call.dialect).tiers ? call.servedAt : (["standard"] as const);
    for (const tier of tiers) {
      const p = tierPrice(listed, tier, call.dialect.tiers?.ratio[tier]);
      if (!p) return { ...UNPRICED, noPrice: tier };
      prices.push(p);
    }
  }
  return { price: dearest(prices), noPrice: null, unlisted: null };
}
