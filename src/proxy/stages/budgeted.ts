// A virtual key with a budget reserves the most the request can cost (budget/worst.ts), at the
// dearest tier it may be served at, before anything is sent; each answer is metered (usage/meter.ts)
// into the ledger and, for a budget, settles it at the tier that served. Whatever was not metered
// settles when the request has ended.
import { pricing } from "../../budget/priceable";
import { budgetStage } from "../../budget/stage";
import { worstCase } from "../../budget/worst";
import { dearest, type Price, priceOf, tierPrice } from "../../usage/prices";
import { Meter, type UsageRecord } from "../../usage/meter";
import type { Call, Stage } from "../call";

export const budgeted: Stage = async (call, next) => {
  const { asked, read, dialect } = call;
  const vk = call.pooled?.vk;
  const listed = vk?.budget ? priceOf(call.settings.prices, asked.provider.name, read.model) : null;
  const { price, noPrice } = priced(call, listed);
  const unknownTier = read.unknownTier ?? noPrice;
  const budget = await budgetStage(call.env, vk, {
    model: read.model, price, rest: asked.rest,
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

/** The model's price at the dearest tier the request may be served at, or the tier that has none. */
function priced(call: Call, listed: Price | null): { price: Price | null; noPrice: string | null } {
  if (!listed) return { price: null, noPrice: null };
  const at = call.servedAt.map((t) => ({ t, p: tierPrice(listed, t, call.dialect.tiers?.ratio[t]) }));
  const none = at.find((x) => x.p === null);
  return none ? { price: null, noPrice: none.t } : { price: dearest(at.map((x) => x.p!)), noPrice: null };
}
