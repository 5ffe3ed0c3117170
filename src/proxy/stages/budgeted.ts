// A virtual key with a budget reserves the most the request can cost (budget/worst.ts), at the
// dearest price it may be charged at (budget/dearest.ts: the tiers it may be served at; a pool's
// members, each at its own provider's price for the model), before anything is sent; each answer is metered
// (usage/meter.ts) into the ledger and, for a budget, settles it at the member and tier that served.
// Whatever was not metered settles when the request has ended.
import { type Chargeable, dearestPrice, UNPRICED } from "../../budget/dearest";
import { pricing } from "../../budget/priceable";
import { budgetStage } from "../../budget/stage";
import { worstCase } from "../../budget/worst";
import { priceName } from "../../providers/key";
import { Meter, type UsageRecord } from "../../usage/meter";
import type { Call, Stage } from "../call";

export const budgeted: Stage = async (call, next) => {
  const { asked, read, dialect } = call;
  const vk = call.pooled?.vk;
  const priceModel = priceName(asked.provider, call.key.model, read.model);
  const { price, noPrice, unlisted } = vk?.budget ? dearestPrice(call.settings.prices, { provider: asked.provider.name, model: priceModel }, chargeable(call), call.servedAt, dialect.tiers?.ratio) : UNPRICED;
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
    provider: asked.provider.name, model: read.model, priceModel, prices: call.settings.prices, strip: read.sent.strip, usageAt: dialect.usage.at, usageHeaders: dialect.usage.headers,
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

/** Every target the route may pick (or the request's own), as the budget prices them. */
function chargeable(call: Call): Chargeable[] {
  const targets = call.route?.targets?.() ?? [];
  if (!targets.length) return [{ tiered: !!call.dialect.tiers }];
  return targets.map((t) => ({ ...(t.priceAs && { priceAs: t.priceAs }), tiered: !!(t.dialect ?? call.dialect).tiers }));
}
