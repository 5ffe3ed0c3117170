// What a batch run's answers report they used, and cost at the price table (PRICES over the built-in one).
import type { Tier } from "../providers/dialect";
import { batchPrice, costOf, priceOf, type PriceTable, tierPrice } from "../usage/prices";
import { usageIn } from "../usage/tokens";
import { dialectOfLine } from "./providers";
import type { SpendSummary, StandardWhy } from "./types";

export class SpendTally {
  readonly s: SpendSummary = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, unpriced: 0, unknownUsage: 0, batchCostUsd: 0, batchAnswers: 0, syncCostUsd: 0, tiers: {}, why: {}, notSold: [] };
  private prices: PriceTable;

  /** `asked`: the tier the run asked its lines to go at (`--mode flex`). */
  constructor(prices: PriceTable, asked?: Tier) {
    this.prices = prices;
    if (asked) this.s.asked = asked;
  }

  /**
   * One answered line: its body's usage at its provider's and model's price (`batch`: the batch
   * price; else the price of the tier that served it), and why it was not served at the tier asked.
   */
  add(provider: string, model: string, body: unknown, batch = false, tier: Tier = "standard", why?: StandardWhy): void {
    if (batch) this.s.batchAnswers += 1;
    if (why) this.s.why[why] = (this.s.why[why] ?? 0) + 1;
    if (why === "not_sold" && !this.s.notSold.includes(model) && this.s.notSold.length < NOT_SOLD_NAMED) this.s.notSold.push(model);
    const t = usageIn(body);
    if (!t) {
      this.s.unknownUsage += 1;
      return;
    }
    this.s.inputTokens += t.input;
    this.s.outputTokens += t.output;
    this.s.cachedTokens += t.cached;
    const listed = priceOf(this.prices, provider, model);
    const ratio = dialectOfLine({ provider }).tiers?.ratio[tier];
    const p = listed && (batch ? batchPrice(listed) : tierPrice(listed, tier, ratio));
    if (!listed || !p) {
      this.s.unpriced += 1;
      return;
    }
    const cost = costOf(t, p);
    this.s.costUsd += cost;
    this.s.syncCostUsd += costOf(t, listed);
    if (batch) this.s.batchCostUsd += cost;
    else {
      const at = (this.s.tiers[tier] ??= { answers: 0, costUsd: 0 });
      at.answers += 1;
      at.costUsd += cost;
    }
  }
}

/** The summary's rows: tokens, and cost with what it leaves out. */
export function spendRows(s: SpendSummary): [string, string][] {
  const n = (v: number) => v.toLocaleString("en-US");
  const left = [s.unpriced ? `${s.unpriced} answers unpriced` : "", s.unknownUsage ? `${s.unknownUsage} without usage` : ""].filter(Boolean);
  return [
    ["tokens", `${n(s.inputTokens)} in${s.cachedTokens ? ` (${n(s.cachedTokens)} cached)` : ""}, ${n(s.outputTokens)} out`],
    ["cost", `$${s.costUsd.toFixed(4)}${left.length ? `  (${left.join(", ")})` : ""}`],
    ...(s.batchAnswers > 0 ? [batchRow(s)] : s.asked || Object.keys(s.tiers).some((t) => t !== "standard") ? [tierRow(s)] : []),
    ...(s.asked && Object.keys(s.why).length > 0 ? [whyRow(s)] : []),
  ];
}

/** Models named in the summary as selling no tier the run asked; the rest are counted. */
const NOT_SOLD_NAMED = 5;

/** A run that asked a tier: why its other answers were not served at it. */
function whyRow(s: SpendSummary): [string, string] {
  const n = (k: StandardWhy) => s.why[k] ?? 0;
  const parts = [
    n("not_sold") && `${n("not_sold")} because ${s.notSold.join(", ")} sell${s.notSold.length === 1 ? "s" : ""} no ${s.asked} here`,
    n("refused") && `${n("refused")} after ${s.asked} refused them for capacity`,
    n("shed") && `${n("shed")} while ${s.asked} was shed`,
  ].filter(Boolean);
  return ["  not at " + s.asked, parts.join("; ")];
}

const ratio = (s: SpendSummary) => (s.syncCostUsd > 0 ? ` (${(s.costUsd / s.syncCostUsd).toFixed(2)}x)` : "");

/** Provider mode: the batch answers at batch prices, the synchronous rest, and the same job synchronously. */
function batchRow(s: SpendSummary): [string, string] {
  const rest = s.costUsd - s.batchCostUsd;
  return ["  of which", `$${s.batchCostUsd.toFixed(4)} at batch prices, $${rest.toFixed(4)} synchronous; the same job synchronously: $${s.syncCostUsd.toFixed(4)}${ratio(s)}`];
}

/** Flex: the answers by the tier that served them, and the same job at standard. */
function tierRow(s: SpendSummary): [string, string] {
  const parts = (Object.entries(s.tiers) as [Tier, { answers: number; costUsd: number }][]).map(([t, v]) => `$${v.costUsd.toFixed(4)} at ${t} (${v.answers})`);
  return ["  of which", `${parts.join(", ")}; the same job at standard: $${s.syncCostUsd.toFixed(4)}${ratio(s)}`];
}
