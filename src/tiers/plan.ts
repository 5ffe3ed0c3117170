/**
 * @module A request's tier across its attempts (proxy/run.ts's Plan.tier): the tier policy chose,
 * the body each target's dialect is sent at each tier (the caller's own where it named the tier),
 * the limit key a tier with limits of its own goes to, and this isolate's outlook of each key's
 * tiers (tiers/fallback.ts). The attempts' steps (proxy/steps.ts) read it.
 */
import { remember } from "../bounded";
import type { KeyMeta } from "../limiter/types";
import type { Dialect, Tier } from "../providers/dialect";
import type { ChosenBy, Fallback } from "./choose";
import { offered, withTier } from "./body";
import { newOutlook, type Outlook } from "./fallback";

export interface TierPlan {
  /** The tier policy chose, and who chose it (a body's own field is sent as the caller wrote it). */
  asked: Tier;
  by: ChosenBy;
  fallback: Fallback;
  /** The model the request names and its route (after the provider): what a row offers a tier for. */
  model: string;
  route: string;
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
  if (!bytes) bodies.set(id, (bytes = withTier(base, spec, tier)));
  return bytes;
}

/** A tier with limits of its own (Groq's flex) has a limit key of its own: the model part marked `@<tier>`. */
export function tierMeta(meta: KeyMeta, tier: Tier): KeyMeta {
  const i = meta.key.lastIndexOf(":");
  return { ...meta, key: `${meta.key.slice(0, i)}@${tier}${meta.key.slice(i)}`, model: `${meta.model}@${tier}` };
}

/** Keys whose tiers this isolate keeps an outlook of; past it the oldest goes (a new one starts hopeful). */
const OUTLOOKS_KEPT = 1_024;
const outlooks = new Map<string, Outlook>();

/** This isolate's outlook of a key's tier. */
export function outlookOf(key: string, tier: Tier): Outlook {
  const id = `${key}\n${tier}`;
  let o = outlooks.get(id);
  if (!o) remember(outlooks, id, (o = newOutlook()), OUTLOOKS_KEPT);
  return o;
}
