/**
 * @module A request's tier across its attempts (proxy/run.ts's Plan.tier), decided once when it
 * arrives: the tier policy chose, whether it may fall back, the tiers it may be served at (what a
 * budget reserves at), the body each target's dialect is sent at each tier (the caller's own where
 * it named the tier), and the limit key a tier with limits of its own goes to. Whether a key has a
 * tier shed is its object's word (limiter/tier-outlooks.ts). The attempts' steps read it.
 */
import type { KeyMeta } from "../limiter/types";
import type { Dialect, Tier } from "../providers/dialect";
import type { ChosenBy, Fallback } from "./choose";
import { offered, withTier } from "./body";

export interface TierPlan {
  /** The tier policy chose, and who chose it (a body's own field is sent as the caller wrote it). */
  asked: Tier;
  by: ChosenBy;
  fallback: Fallback;
  /** The model the request names and its route (after the provider): what a row offers a tier for. */
  model: string;
  route: string;
  /** The body's JSON (the request's one parse), whose field is written for a tier its own body did not name. */
  json: unknown;
}

/**
 * The plan for a tier policy chose, against the dialects that may serve it (a pool's members'):
 * with fallback `none`, one must offer it for this model and route (else the reason it cannot go,
 * a 400: it would go at another tier). `servedAt`: every tier an answer may come at, the dearest
 * of which a budget reserves at.
 */
export function planTier(chosen: { tier: Tier; by: ChosenBy }, fallback: Fallback, model: string, route: string, dialects: readonly (Dialect | undefined)[], json: unknown): { plan: TierPlan; servedAt: Tier[] } | string {
  const plan: TierPlan = { asked: chosen.tier, by: chosen.by, fallback, model, route, json };
  if (chosen.tier === "standard") return { plan, servedAt: ["standard"] };
  const offeredBy = dialects.filter((d) => offered(d?.tiers, chosen.tier, model, route)).length;
  if (fallback === "none") {
    if (offeredBy === 0) return `model ${JSON.stringify(model.slice(0, 128))} is not offered at the ${chosen.tier} tier here, and x-slotgate-tier-fallback: none keeps it from any other`;
    return { plan, servedAt: [chosen.tier] };
  }
  return { plan, servedAt: offeredBy > 0 ? [chosen.tier, "standard"] : ["standard"] };
}

/**
 * A request no policy chose a tier for: the tiers its provider's default may serve it at
 * (`byDefault`: Anthropic's `auto` may be Priority Tier), and, where a budget could not price one
 * of them, standard asked for it outright (the row's word for it written), so a budget's cap holds.
 */
export function unchosen(d: Dialect, budgeted: boolean, priced: (t: Tier) => boolean): { chosen: { tier: Tier; by: ChosenBy } | null; servedAt: Tier[] } {
  const more = d.tiers?.byDefault;
  if (!more || more === "standard") return { chosen: null, servedAt: ["standard"] };
  if (budgeted && !priced(more)) return { chosen: { tier: "standard", by: "budget" }, servedAt: ["standard"] };
  return { chosen: null, servedAt: ["standard", more] };
}

/** The tier a dialect is sent at for `want`: `want` where it offers it for this model and route, else standard. */
export const tierAt = (t: TierPlan, d: Dialect | undefined, want: Tier): Tier => (offered(d?.tiers, want, t.model, t.route) ? want : "standard");

/**
 * The body sent to `d` at `tier`: the caller's as it came where the tier is the one its own body
 * named (or the route takes no tier), else with the row's field written. Made once per dialect and tier.
 */
export function tierBody(t: TierPlan, bodies: Map<string, Uint8Array>, base: Uint8Array, d: Dialect | undefined, tier: Tier): Uint8Array {
  const spec = d?.tiers;
  if (!spec || !spec.routes.test(t.route) || (t.by === "body" && tier === t.asked)) return base;
  const id = `${d.name}\n${tier}`;
  let bytes = bodies.get(id);
  if (!bytes) bodies.set(id, (bytes = withTier(t.json, base, spec, tier)));
  return bytes;
}

/** A tier with limits of its own (Groq's flex) has a limit key of its own: the model part marked `@<tier>`. */
export function tierMeta(meta: KeyMeta, tier: Tier): KeyMeta {
  const i = meta.key.lastIndexOf(":");
  return { ...meta, key: `${meta.key.slice(0, i)}@${tier}${meta.key.slice(i)}`, model: `${meta.model}@${tier}` };
}
