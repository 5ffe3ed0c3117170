/**
 * @module The dearest price a request may be charged at, as the meter will price it, for a budget
 * to reserve at before anything is sent (issue 39): a pooled request's member is chosen after the
 * reservation, so it covers every member that may serve it, each at its own provider and model (a
 * Bedrock or Vertex member of an Anthropic pool), at each tier it may be served at (the request's,
 * or standard where the member's dialect sells none), at the route's ratios. A model or tier with
 * no price is named instead: nothing may go where nothing would be charged. Pure.
 */
import type { Tier } from "../providers/dialect";
import { dearest, type Price, type PriceTable, priceOf, tierPrice } from "../usage/prices";

/** A target as the budget sees it: what its answers are priced as (absent: the request's provider and model), and whether its dialect sells tiers. */
export interface Chargeable {
  priceAs?: { provider: string; model: string };
  tiered: boolean;
}

export interface Priced {
  price: Price | null;
  /** A tier it may be served at that has no price. */
  noPrice: string | null;
  /** The model with no price, where a pool's member names it otherwise (`bedrock:<its id>`). */
  unlisted: string | null;
}

export const UNPRICED: Priced = { price: null, noPrice: null, unlisted: null };

/**
 * `targets`: every target the route may pick (none: the request's own, at `tiered`); `servedAt`:
 * the tiers the request may be served at; `ratio`: the route's dialect's tier ratios.
 */
export function dearestPrice(
  table: PriceTable, asked: { provider: string; model: string }, targets: readonly Chargeable[], servedAt: readonly Tier[],
  ratio: Partial<Record<Tier, number | "batch">> | undefined,
): Priced {
  const prices: Price[] = [];
  for (const t of targets) {
    const as = t.priceAs ?? asked;
    const listed = priceOf(table, as.provider, as.model);
    if (!listed) return { ...UNPRICED, unlisted: t.priceAs ? `${as.provider}:${as.model}` : null };
    for (const tier of t.tiered ? servedAt : (["standard"] as const)) {
      const p = tierPrice(listed, tier, ratio?.[tier]);
      if (!p) return { ...UNPRICED, noPrice: tier };
      prices.push(p);
    }
  }
  return prices.length ? { price: dearest(prices), noPrice: null, unlisted: null } : UNPRICED;
}
