// What a budgeted virtual key may ask for: what the gateway can price from an answer's own token
// counts and the price table, and what costs nothing. Anything else would spend money its budget
// never sees, so it is refused (budget/stage.ts). Data, the `pricing` column of each API family's
// row (providers/table.ts), read by one function.
import { scopeOf } from "../providers/endpoints";
import { FLAVOURS, type FlavourName } from "../providers/table";

/** What a request is to a budget: free, priced by its answer's tokens, or unpriceable (why). */
export type Pricing = { kind: "free" } | { kind: "priced" } | { kind: "unpriceable"; why: string };

/** What a budget reads of a request to price it. */
export interface PricingAsk {
  flavour: FlavourName;
  method: string;
  rest: string;
  /** The parsed body (null: not JSON). */
  json: unknown;
  model: string;
  /**
   * The service tier it is sent at, where not standard (its body's, its header's, its key's or its
   * lane's: tiers/), and whether PRICES (or its provider's published ratio) prices the model there.
   */
  tier?: { name: string; priced: boolean };
}

/** Scopes whose endpoints cost nothing (lists, reads, moderation), or whose cost another stage accounts (a provider batch reserves at creation). */
const FREE_SCOPES = new Set(["models", "moderations", "files", "batches", "stored"]);

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A tool's name as its API spells it: its `type`, or (Gemini) the key it is set under. */
const toolNames = (t: unknown): string[] => (isObj(t) ? (typeof t.type === "string" ? [t.type] : Object.keys(t)) : []);

/** How a budget sees this request. */
export function pricing(r: PricingAsk): Pricing {
  const scope = scopeOf(r.flavour, r.method, r.rest);
  if (scope && FREE_SCOPES.has(scope)) return { kind: "free" };
  const no = (why: string): Pricing => ({ kind: "unpriceable", why });
  if (scope !== "inference") return no(`${r.method} ${r.rest.slice(0, 100)} is not priced by tokens`);
  const row = FLAVOURS[r.flavour].pricing;
  if (row.counts.test(r.rest)) return { kind: "free" };
  if (!isObj(r.json)) return no("its body is not JSON, so its model and size cannot be read");
  if (r.model === "*") return no("it names no model");
  const fee = (Array.isArray(r.json.tools) ? r.json.tools : []).flatMap(toolNames).find((n) => row.toolFees.test(n));
  if (fee) return no(`the server-side tool ${fee.slice(0, 64)} is billed per use, which the answer's tokens do not show`);
  const body = r.json;
  const field = row.perUse.find((f) => body[f] !== undefined && body[f] !== false);
  if (field) return no(`${field} is billed apart from the answer's tokens`);
  if (r.tier && !r.tier.priced) return no(`service tier ${JSON.stringify(r.tier.name)} has no price in PRICES`);
  return { kind: "priced" };
}
