// The budget stage of the request path: a virtual key with a budget reserves the most the request
// can cost before anything is sent (worst.ts), is charged for every attempt that was sent (an
// answer's true cost; an attempt that got none, its worst case), and settles once it has ended.
import type { Env } from "../env";
import { gatewayError } from "../proxy/errors";
import type { UsageRecord } from "../usage/types";
import { costOf, type Price } from "../usage/prices";
import { budgetOf } from "./object";
import type { Pricing } from "./priceable";
import type { Period } from "./period";
import { type Bound, outputField, outputThatFits, type Worst } from "./worst";

/** What the stage needs of a virtual key (keys/object.ts VirtualKey). */
export interface Budgeted {
  name: string;
  createdAt: string;
  budget?: number | null;
  budgetPeriod?: Period | null;
}

export interface BudgetHandle {
  /**
   * The meter's callback: the answer's true cost (an answer with no usage: its worst case; usage
   * but no price: 0). A stream cut before its end (`whole` false) is charged at least its prompt
   * and its whole output limit: the provider bills what it generated, which the gateway never saw.
   */
  counted: (r: UsageRecord, whole?: boolean) => void;
  /** An attempt that was sent and got no answer (its time ran out, its caller left, it broke off): the provider may bill it whole. */
  lost: () => void;
  /** Before the attempt after a lost one: room for one more worst case, or the 402 that ends the request. */
  again: () => Promise<Response | null>;
  /** After the response: if no answer was metered (an error, a cache hit, a caller gone), it settles at what its lost attempts cost. */
  after: (metered: boolean) => void;
}

const usd = (n: number) => `$${n.toFixed(4)}`;
const WORD = { day: "daily", month: "monthly", total: "total" } as const;

/** What the stage knows of a request's price. */
export interface Priced {
  /** The model the request names (`*` when it names none), or the one with no price (a pool member's own: `bedrock:<id>`). */
  model: string;
  /** Its price at the dearest tier it may be served at (null: no price). */
  price: Price | null;
  /** Whether it is free, priced by its answer's tokens, or something a budget cannot count (priceable.ts); read only for budgeted keys. */
  pricing: () => Pricing;
  /** The most it can cost at `price` (worst.ts), or why that has no bound; read only for budgeted keys. */
  worst: () => Worst;
  /** The path after the provider: the message that says how to fit names the route's output field. */
  rest: string;
}

/**
 * null: no budget, or nothing to count (a list, a token count; a provider batch reserves in its
 * own stage): no call made. A Response: 402 budget_exceeded (with how to fit where a smaller
 * output limit would), 403 forbidden for what the gateway cannot price or bound (a model with no
 * price, a body that is not JSON, a tool billed per use, a tier with no price, no output limit and
 * no maximum known), or 503 when the budget could not be checked (fail closed); the request is
 * never forwarded. Else the handle.
 */
export async function budgetStage(env: Env, vk: Budgeted | undefined, priced: Priced, waitUntil: (p: Promise<unknown>) => void): Promise<Response | BudgetHandle | null> {
  if (!vk || typeof vk.budget !== "number") return null;
  const p = priced.pricing();
  if (p.kind === "free") return null;
  const refuse = (why: string) => gatewayError("forbidden", `virtual key ${vk.name} has a budget, and ${why}: a budgeted key may not ask for what the gateway cannot price`);
  if (p.kind === "unpriceable") return refuse(p.why);
  const price = priced.price;
  if (!price) return unpriced(vk.name, priced.model);
  const worst = priced.worst();
  if ("why" in worst) return refuse(worst.why);
  const b = worst.bound;
  const key = { ...vk, budget: vk.budget };
  const fit = (room: number) => howToFit(b, price, room, priced.rest);
  const first = await reserveBudget(env, key, b.usd, "this request", undefined, fit);
  if (first instanceof Response) return first;
  return new Charges(b, price, [first], () => reserveBudget(env, key, b.usd, "its next attempt (one before it was sent and got no answer)", undefined, fit), waitUntil);
}

/** A request's charges across its attempts, settled once. */
class Charges implements BudgetHandle {
  #b: Bound;
  #price: Price;
  #held: Held[];
  #more: () => Promise<Response | Held>;
  #waitUntil: (p: Promise<unknown>) => void;
  /** What its lost attempts cost. */
  #lostUsd = 0;
  #lost = 0;
  #done = false;

  constructor(b: Bound, price: Price, held: Held[], more: () => Promise<Response | Held>, waitUntil: (p: Promise<unknown>) => void) {
    this.#b = b;
    this.#price = price;
    this.#held = held;
    this.#more = more;
    this.#waitUntil = waitUntil;
  }

  counted = (r: UsageRecord, whole = true) => this.#settle(whole ? (r.costUsd ?? (r.tokens ? 0 : this.#b.usd)) : this.#cut(r));

  lost = () => {
    this.#lost++;
    this.#lostUsd += this.#b.usd;
  };

  again = async (): Promise<Response | null> => {
    // Each reservation covers one worst case: the attempt about to go needs one of its own.
    if (this.#held.length > this.#lost) return null;
    const more = await this.#more();
    if (more instanceof Response) return more;
    this.#held.push(more);
    return null;
  };

  after = (metered: boolean) => {
    if (!metered) this.#settle(0);
  };

  /** At least the prompt (as the provider reported it, else its bound) and the whole output bound, and never less than what was seen. */
  #cut(r: UsageRecord): number {
    const seen = r.tokens;
    const floor = costOf({ input: seen ? seen.input : this.#b.input, output: Math.max(seen?.output ?? 0, this.#b.output), cached: seen?.cached ?? 0, cacheWrite: seen?.cacheWrite ?? 0 }, this.#price);
    return Math.max(floor, r.costUsd ?? 0);
  }

  /** The answer's cost and its lost attempts', on the first reservation; the others settle at nothing. */
  #settle(answerUsd: number): void {
    if (this.#done) return;
    this.#done = true;
    const total = answerUsd + this.#lostUsd;
    this.#held.forEach((h, i) => this.#waitUntil(h.settle(i === 0 ? total : 0).catch(() => {})));
  }
}

/** What a 402 adds when a smaller output limit would fit the room left. */
function howToFit(b: Bound, price: Price, roomUsd: number, rest: string): string {
  const most = outputThatFits(b, price, roomUsd);
  const field = outputField(rest);
  if (most >= 1) return `: with ${field} at most ${most.toLocaleString("en-US")}${b.answers > 1 ? ` (${b.answers} answers)` : ""} it would fit`;
  return `: its prompt alone may cost more than is left`;
}

/** A budgeted key naming a model with no price: it would cost the budget nothing. */
export const unpriced = (name: string, model: string) =>
  gatewayError("forbidden", `virtual key ${name} has a budget, and model ${JSON.stringify(model.slice(0, 128))} has no price: add it to PRICES`);

type Held = { id: string; settle: (cost: number) => Promise<void> };

/**
 * Reserves `estimate` in a budgeted key's Budget: 402 budget_exceeded when it does not fit (with
 * `fit`'s advice for the room left), 503 when the budget cannot be checked (fail closed). `ttlMs`:
 * how long it may stay unsettled (a provider batch's reservation outlives a request's).
 */
export async function reserveBudget(env: Env, vk: Budgeted & { budget: number }, estimate: number, what: string, ttlMs?: number, fit?: (roomUsd: number) => string): Promise<Response | Held> {
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
    const room = Math.max(0, budget - verdict.spend - verdict.reserved);
    return gatewayError("budget_exceeded", `virtual key ${vk.name} has spent ${usd(verdict.spend)} of its ${WORD[period]} budget of ${usd(budget)}${held}; ${what} may cost up to ${usd(estimate)}${fit?.(room) ?? ""}`);
  }
  return { id, settle: (cost) => stub.settle(id, cost, period) };
}
