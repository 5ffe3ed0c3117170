// What tokens cost: a built-in table for the main models of the built-in providers, and the
// PRICES variable over it. Pure, apart from remembering the last PRICES it parsed.
import { ConfigError } from "../config/error";
import type { Tier } from "../providers/dialect";
import type { Tokens } from "./tokens";

/** USD per million tokens. `cached`: a prompt-cache read; `cacheWrite`: a write. Either defaults to `input`. */
export interface Price {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
  /** Provider batches' price (OpenAI, Anthropic and Gemini bill them apart); default half of each rate. */
  batch?: Price;
  /** The flex and priority tiers' prices (issue 35); default from the provider's published ratio (providers/tiers.ts). */
  flex?: Price;
  priority?: Price;
}

/** When the built-in figures were last compared with the providers' public price pages. */
export const PRICES_CHECKED = "2025-10-31";

/**
 * `provider:model input output cached cacheWrite` per million tokens (list prices, standard tier,
 * the lowest context band). A dated or `-latest` name falls back to its base (`gpt-4o-2024-08-06`
 * is priced as `gpt-4o`). Kept as one string: the bundle has a size budget.
 */
const TABLE =
  "openai:gpt-5 1.25 10 .125;openai:gpt-5-mini .25 2 .025;openai:gpt-5-nano .05 .4 .005;" +
  "openai:gpt-4.1 2 8 .5;openai:gpt-4.1-mini .4 1.6 .1;openai:gpt-4.1-nano .1 .4 .025;" +
  "openai:gpt-4o 2.5 10 1.25;openai:gpt-4o-mini .15 .6 .075;openai:o3 2 8 .5;openai:o4-mini 1.1 4.4 .275;" +
  "openai:o3-mini 1.1 4.4 .55;openai:o1 15 60 7.5;openai:text-embedding-3-small .02 0;openai:text-embedding-3-large .13 0;" +
  "anthropic:claude-sonnet-4-5 3 15 .3 3.75;anthropic:claude-haiku-4-5 1 5 .1 1.25;anthropic:claude-opus-4-1 15 75 1.5 18.75;anthropic:claude-opus-4 15 75 1.5 18.75;anthropic:claude-opus-4-0 15 75 1.5 18.75;" +
  "anthropic:claude-sonnet-4 3 15 .3 3.75;anthropic:claude-sonnet-4-0 3 15 .3 3.75;anthropic:claude-3-7-sonnet 3 15 .3 3.75;" +
  "anthropic:claude-3-5-sonnet 3 15 .3 3.75;anthropic:claude-3-5-haiku .8 4 .08 1;anthropic:claude-3-haiku .25 1.25 .03 .3;" +
  "gemini:gemini-2.5-pro 1.25 10 .31;gemini:gemini-2.5-flash .3 2.5 .075;gemini:gemini-2.5-flash-lite .1 .4 .025;" +
  "gemini:gemini-2.0-flash .1 .4 .025;gemini:gemini-2.0-flash-lite .075 .3;" +
  "groq:llama-3.3-70b-versatile .59 .79;groq:llama-3.1-8b-instant .05 .08;" +
  "mistral:mistral-large 2 6;mistral:mistral-medium .4 2;mistral:mistral-small .1 .3;" +
  "deepseek:deepseek-chat .27 1.1 .07;deepseek:deepseek-reasoner .55 2.19 .14;" +
  "xai:grok-4 3 15 .75;xai:grok-3 3 15 .75;xai:grok-3-mini .3 .5 .075";

export type PriceTable = Map<string, Price>;

function builtIn(): PriceTable {
  const t: PriceTable = new Map();
  for (const row of TABLE.split(";")) {
    const [name, input, output, cached, cacheWrite] = row.split(" ");
    const p: Price = { input: Number(input), output: Number(output) };
    if (cached !== undefined) p.cached = Number(cached);
    if (cacheWrite !== undefined) p.cacheWrite = Number(cacheWrite);
    t.set(name!, p);
  }
  return t;
}

const BUILT_IN = builtIn();
let parsed: { raw: unknown; table: PriceTable } | null = null;

const FIELDS = ["input", "output", "cached", "cacheWrite"] as const;

/**
 * The table with PRICES over it: a JSON object (or a string holding one) of `provider:model` or
 * `model` to `{ input, output, cached?, cacheWrite? }` (USD per million tokens). A malformed one is
 * a ConfigError naming PRICES, never a guess.
 */
export function priceTable(raw: unknown): PriceTable {
  if (raw === undefined || raw === "" || raw === "{}") return BUILT_IN;
  if (parsed?.raw === raw) return parsed.table;
  let json = raw;
  if (typeof raw === "string") {
    try {
      json = JSON.parse(raw);
    } catch {
      throw new ConfigError("PRICES is not valid JSON");
    }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new ConfigError("PRICES must be a JSON object of model to price");
  const table = new Map(BUILT_IN);
  for (const [name, v] of Object.entries(json as Record<string, unknown>)) {
    const p = readPrice(v);
    if (!p || !NESTED.every((k) => nested(p, k, (v as Record<string, unknown>)[k])))
      throw new ConfigError(`PRICES[${JSON.stringify(name.slice(0, 64))}] needs input and output (USD per million tokens, >= 0), optionally cached, cacheWrite, and batch, flex and priority (the same fields)`);
    table.set(name, p);
  }
  parsed = { raw, table };
  return table;
}

/** The prices a price may carry of its own: a provider batch's and the tiers'. */
const NESTED = ["batch", "flex", "priority"] as const;

/** Sets `p[k]` from PRICES when given; false when given and not a price. */
function nested(p: Price, k: (typeof NESTED)[number], v: unknown): boolean {
  if (v === undefined) return true;
  const q = readPrice(v);
  if (q) p[k] = q;
  return q !== null;
}

/** One price object of PRICES, or null when it is not one. */
function readPrice(v: unknown): Price | null {
  const o = v as Record<string, unknown>;
  if (typeof v !== "object" || v === null || FIELDS.some((f) => o[f] !== undefined && !(typeof o[f] === "number" && Number.isFinite(o[f]) && (o[f] as number) >= 0))) return null;
  if (o.input === undefined || o.output === undefined) return null;
  const p: Price = { input: o.input as number, output: o.output as number };
  if (o.cached !== undefined) p.cached = o.cached as number;
  if (o.cacheWrite !== undefined) p.cacheWrite = o.cacheWrite as number;
  return p;
}

/** What a provider batch's answer costs: the price's own `batch`, else half of each rate. */
export function batchPrice(p: Price): Price {
  return p.batch ?? scaled(p, 0.5);
}

/** `p` with every rate times `k`. */
function scaled(p: Price, k: number): Price {
  const q: Price = { input: p.input * k, output: p.output * k };
  if (p.cached !== undefined) q.cached = p.cached * k;
  if (p.cacheWrite !== undefined) q.cacheWrite = p.cacheWrite * k;
  return q;
}

/**
 * What an answer served at `tier` costs: standard's price; a tier's own price from PRICES; else
 * the provider's published ratio (`ratio`, its dialect row's: a multiple, or `batch` for the
 * model's batch price). null: the tier has no price (PRICES and the row give none).
 */
export function tierPrice(p: Price, tier: Tier, ratio?: number | "batch"): Price | null {
  if (tier === "standard") return p;
  const own = p[tier];
  if (own) return own;
  if (ratio === undefined) return null;
  return ratio === "batch" ? batchPrice(p) : scaled(p, ratio);
}

/** `gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`, `mistral-large-latest`: the name without its date or tag. */
const baseName = (model: string) => model.replace(/(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$/, "");

/** The price of a provider's model: `provider:model`, then `model`, then both again without a date suffix. */
export function priceOf(table: PriceTable, provider: string, model: string): Price | null {
  for (const m of model === baseName(model) ? [model] : [model, baseName(model)]) {
    const p = table.get(`${provider}:${m}`) ?? table.get(m);
    if (p) return p;
  }
  return null;
}

/** USD for `t` at `p`. Cached and cache-write tokens are parts of the input, priced at their own rates. */
export function costOf(t: Tokens, p: Price): number {
  const plain = Math.max(0, t.input - t.cached - t.cacheWrite);
  return (plain * p.input + t.cached * (p.cached ?? p.input) + t.cacheWrite * (p.cacheWrite ?? p.input) + t.output * p.output) / 1e6;
}
