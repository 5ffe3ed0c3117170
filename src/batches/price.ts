// What a batch's result lines cost, for the ledger and the budget: each answered line at its
// model's batch price, under the member's limiter key for that model. Pure.
import { batchPrice, costOf, type PriceTable, priceOf } from "../usage/prices";
import type { UsageRecord } from "../usage/types";
import type { ResultLine } from "./ops";

/** One result line as the book keeps it: counted once; an answered one's record goes to the ledger under `key`. */
export interface Metered {
  id: string;
  key: string;
  /** null: a line with no answer (failed, expired, cancelled): counted, never charged. */
  record: UsageRecord | null;
}

/** Whose lines these are: the route's provider, the virtual key (caller too), its pool, the member's credential hash. */
export interface Whose {
  provider: string;
  vk: string;
  pool: string;
  memberHash: string;
}

export function pricedLines(lines: readonly ResultLine[], prices: PriceTable, w: Whose): Metered[] {
  return lines.map((l) => {
    if (!l.tokens) return { id: l.id, key: "", record: null };
    const model = l.model ?? "*";
    const price = priceOf(prices, w.provider, model);
    const record: UsageRecord = { caller: w.vk, virtualKey: w.vk, pool: w.pool, model, tokens: l.tokens, costUsd: price ? costOf(l.tokens, batchPrice(price)) : null };
    return { id: l.id, key: `${w.provider}:${model}:${w.memberHash}`, record };
  });
}
