// A line's service tier in direct mode (`slotgate batch --mode flex` without --gateway): the same
// rows, policy and fallback as the gateway's (src/tiers/), for one line sent straight to its provider.
import type { Tier, TierSpec } from "../providers/dialect";
import { offered, withTier } from "../tiers/body";
import { newOutlook, type Outlook, worthTrying } from "../tiers/fallback";
import type { SendContext } from "./exchange";
import { dialectOfLine } from "./providers";
import type { StandardWhy } from "./types";
import type { Item } from "./input";

export interface LineTier {
  spec: TierSpec;
  /** The run's outlook of the tier at this provider and model. */
  outlook: Outlook;
  /** The tier it goes at next: the run's, standard once it fell back. */
  tier: Tier;
  /** The tier's refusals it waited through. */
  refusals: number;
  /** Why it goes at standard from the start, where it does. */
  why?: StandardWhy;
}

/** The line's tier, where the run asks one and the line's provider sells it for its model and endpoint; else null (sent as written). */
export function lineTier(ctx: SendContext, item: Item): LineTier | null {
  const spec = dialectOfLine(item).tiers;
  if (!ctx.tier || !spec || !spec.routes.test(item.url)) return null;
  const id = `${item.provider}\n${item.model}\n${ctx.tier}`;
  let outlook = ctx.outlooks.get(id);
  if (!outlook) ctx.outlooks.set(id, (outlook = newOutlook()));
  const why = !offered(spec, ctx.tier, item.model, item.url) ? "not_sold" : !worthTrying(outlook, ctx.now()) ? "shed" : undefined;
  return { spec, outlook, tier: why ? "standard" : ctx.tier, refusals: 0, ...(why && { why }) };
}

/** Why a line that went at `served` in a run that asked `asked` was not served at it (undefined: it was, or none was asked). */
export function standardWhy(asked: Tier | undefined, served: Tier, refusals: number, sold: boolean, before?: StandardWhy): StandardWhy | undefined {
  if (!asked || served === asked) return undefined;
  return before ?? (!sold ? "not_sold" : refusals > 0 ? "refused" : "shed");
}

/** The line with its provider's tier field written. */
export function atTier(item: Item, t: LineTier): Item {
  return { ...item, payload: new TextDecoder().decode(withTier(item.body, new TextEncoder().encode(item.payload), t.spec, t.tier)) };
}
