// The budget stage of the request path: a virtual key with a budget reserves the request's
// estimated cost before anything is sent, and settles with the true cost once it is known.
import type { Env } from "../env";
import { gatewayError } from "../proxy/errors";
import type { UsageRecord } from "../usage/types";
import { costOf, type Price } from "../usage/prices";
import { budgetOf } from "./object";
import type { Pricing } from "./priceable";
import type { Period } from "./period";

/** What the stage needs of a virtual key (keys/object.ts VirtualKey). */
export interface Budgeted {
  name: string;
  createdAt: string;
  budget?: number | null;
  budgetPeriod?: Period | null;
}

export interface BudgetHandle {
  /**
   * The meter's callback: the answer's true cost (an answer with no usage: its estimate; usage but
   * no price: 0). A stream cut before its end (`whole` false) is charged at least its prompt and
   * its whole output limit: the provider bills what it generated, which the gateway never saw.
   */
  counted: (r: UsageRecord, whole?: boolean) => void;
  /** After the response: if no answer was metered (an error, a cache hit, a caller gone), the reservation is released. */
  after: (metered: boolean) => void;
}

/** USD a request may cost: its prompt (about a token per 4 bytes of body) and its output limit, at its model's price; 0 unpriced. */
export function estimateUsd(bodyBytes: number, tokens: number, price: Price | null): number {
  if (!price) return 0;
  const input = Math.ceil(bodyBytes / 4);
  return costOf({ input, output: Math.max(0, tokens - input), cached: 0, cacheWrite: 0 }, price);
}

const usd = (n: number) => `$${n.toFixed(4)}`;
const WORD = { day: "daily", month: "monthly", total: "total" } as const;

/** What the stage knows of a request's price. */
export interface Priced {
  /** The model the request names; `*` when it names none. */
  model: string;
  price: Price | null;
  /** Its estimated cost, computed only for budgeted keys. */
  estimate: () => number;
  /** Whether it is free, priced by its answer's tokens, or something a budget cannot count (priceable.ts); read only for budgeted keys. */
  pricing: () => Pricing;
  /** Its prompt as estimated and the output it may generate (its limit, else CUT_OUTPUT_TOKENS): what a cut stream is charged at least. */
  limits: () => { input: number; output: number };
}

/**
 * The output a cut stream is charged when its request named no limit: the provider's default is
 * the model's own maximum, which the price table does not know; this is what the common ones allow.
 */
export const CUT_OUTPUT_TOKENS = 32_768;

/**
 * null: no budget, or nothing to count (a list, a token count; a provider batch reserves in its
 * own stage): no call made. A Response: 402 budget_exceeded, 403 forbidden for what the gateway
 * cannot price (a model with no price, a body that is not JSON, a tool billed per use, a tier or
 * context band with no price: it would cost the budget nothing), or 503 when the budget could not
 * be checked (fail closed); the request is never forwarded. Else the handle.
 */
export async function budgetStage(env: Env, vk: Budgeted | undefined, priced: Priced, waitUntil: (p: Promise<unknown>) => void): Promise<Response | BudgetHandle | null> {
  if (!vk || typeof vk.budget !== "number") return null;
  const p = priced.pricing();
  if (p.kind === "free") return null;
  if (p.kind === "unpriceable")
    return gatewayError("forbidden", `virtual key ${vk.name} has a budget, and ${p.why}: a budgeted key may not ask for what the gateway cannot price`);
  if (!priced.price) return unpriced(vk.name, priced.model);
  const estimate = priced.estimate();
  const held = await reserveBudget(env, { ...vk, budget: vk.budget }, estimate, "this request");
  if (held instanceof Response) return held;
  let done = false;
  const settle = (cost: number) => {
    if (done) return;
    done = true;
    waitUntil(held.settle(cost).catch(() => {}));
  };
  const price = priced.price;
  /** At least the prompt (as the provider reported it, else estimated) and the whole output limit, and never less than what was seen. */
  const cut = (r: UsageRecord) => {
    const seen = r.tokens;
    const { input, output } = priced.limits();
    const floor = costOf({ input: seen ? seen.input : input, output: Math.max(seen?.output ?? 0, output), cached: seen?.cached ?? 0, cacheWrite: seen?.cacheWrite ?? 0 }, price);
    return Math.max(floor, r.costUsd ?? 0);
  };
  return {
    counted: (r, whole = true) => settle(whole ? (r.costUsd ?? (r.tokens ? 0 : estimate)) : cut(r)),
    after: (metered) => {
      if (!metered) settle(0);
    },
  };
}

/** A budgeted key naming a model with no price: it would cost the budget nothing. */
export const unpriced = (name: string, model: string) =>
  gatewayError("forbidden", `virtual key ${name} has a budget, and model ${JSON.stringify(model.slice(0, 128))} has no price: add it to PRICES`);

/**
 * Reserves `estimate` in a budgeted key's Budget: 402 budget_exceeded when it does not fit, 503
 * when the budget cannot be checked (fail closed). `ttlMs`: how long it may stay unsettled (a
 * provider batch's reservation outlives a request's).
 */
export async function reserveBudget(env: Env, vk: Budgeted & { budget: number }, estimate: number, what: string, ttlMs?: number): Promise<Response | { id: string; settle: (cost: number) => Promise<void> }> {
  const { budget } = vk;
  const period = vk.budgetPeriod ?? "total";
  const stub = budgetOf(env, vk);
  const id = crypto.randomUUID();
  let verdict;
  try {
    verdict = await stub.reserve(id, estimate, budget, period, ttlMs);
  } catch {
    return gatewayError("limiter_unavailable", `the budget of virtual key ${vk.name} could not be checked`, { "retry-after": "1" });
  }
  if (!verdict.ok) {
    const held = verdict.reserved > 0 ? ` (${usd(verdict.reserved)} more is held by requests in flight)` : "";
    return gatewayError("budget_exceeded", `virtual key ${vk.name} has spent ${usd(verdict.spend)} of its ${WORD[period]} budget of ${usd(budget)}${held}; ${what} may cost up to ${usd(estimate)}`);
  }
  return { id, settle: (cost) => stub.settle(id, cost, period) };
}
