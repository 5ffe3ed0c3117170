// What a batch run's answers report they used, and cost at the price table (PRICES over the built-in one).
import { batchPrice, costOf, priceOf, type PriceTable } from "../usage/prices";
import { usageIn } from "../usage/tokens";

export interface SpendSummary {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** Priced answers only. */
  costUsd: number;
  /** Answers with usage but no price for their model. */
  unpriced: number;
  /** Successful answers that carried no usage. */
  unknownUsage: number;
  /** Of costUsd, what answers from provider batches cost (at batch prices), and how many they were. */
  batchCostUsd: number;
  batchAnswers: number;
  /** What the same answers would have cost synchronously. */
  syncCostUsd: number;
}

export class SpendTally {
  readonly s: SpendSummary = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0, unpriced: 0, unknownUsage: 0, batchCostUsd: 0, batchAnswers: 0, syncCostUsd: 0 };
  private prices: PriceTable;

  constructor(prices: PriceTable) {
    this.prices = prices;
  }

  /** One answered line: its body's usage at its provider's and model's price (`batch`: the batch price). */
  add(provider: string, model: string, body: unknown, batch = false): void {
    if (batch) this.s.batchAnswers += 1;
    const t = usageIn(body);
    if (!t) {
      this.s.unknownUsage += 1;
      return;
    }
    this.s.inputTokens += t.input;
    this.s.outputTokens += t.output;
    this.s.cachedTokens += t.cached;
    const p = priceOf(this.prices, provider, model);
    if (!p) {
      this.s.unpriced += 1;
      return;
    }
    const cost = costOf(t, batch ? batchPrice(p) : p);
    this.s.costUsd += cost;
    this.s.syncCostUsd += costOf(t, p);
    if (batch) this.s.batchCostUsd += cost;
  }
}

/** The summary's rows: tokens, and cost with what it leaves out. */
export function spendRows(s: SpendSummary): [string, string][] {
  const n = (v: number) => v.toLocaleString("en-US");
  const left = [s.unpriced ? `${s.unpriced} answers unpriced` : "", s.unknownUsage ? `${s.unknownUsage} without usage` : ""].filter(Boolean);
  return [
    ["tokens", `${n(s.inputTokens)} in${s.cachedTokens ? ` (${n(s.cachedTokens)} cached)` : ""}, ${n(s.outputTokens)} out`],
    ["cost", `$${s.costUsd.toFixed(4)}${left.length ? `  (${left.join(", ")})` : ""}`],
    ...(s.batchAnswers > 0 ? [batchRow(s)] : []),
  ];
}

/** Provider mode: the batch answers at batch prices, the synchronous rest, and the same job synchronously. */
function batchRow(s: SpendSummary): [string, string] {
  const ratio = s.syncCostUsd > 0 ? ` (${(s.costUsd / s.syncCostUsd).toFixed(2)}x)` : "";
  const rest = s.costUsd - s.batchCostUsd;
  return ["  of which", `$${s.batchCostUsd.toFixed(4)} at batch prices, $${rest.toFixed(4)} synchronous; the same job synchronously: $${s.syncCostUsd.toFixed(4)}${ratio}`];
}
