// What tokens cost: the built-in prices (providers/prices.ts) read into a table, and the PRICES
// variable over it. Pure, apart from remembering the last PRICES it parsed.
import { ConfigError } from "../config/error";
import type { Tier } from "../providers/dialect";
import { LONG_BANDS, MODELS, NAME_PARTS } from "../providers/prices";
import type { Tokens } from "./tokens";

/** USD per million tokens. `cached`: a prompt-cache read; `cacheWrite`: a write. Either defaults to `input`. */
export interface Rates {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
}

/**
 * A model's price, and what bounds what one request may cost (a budget reserves that: issue 39).
 * `long`: the dearer rates every token of a request is billed at once its prompt passes `above`
 * tokens (Gemini 2.5 Pro, Claude's 1M-token context). `maxOutput`: the most one answer (one
 * choice) may generate; `context`: the most the model reads, prompt and all.
 */
export interface Price extends Rates {
  long?: Rates & { above: number };
  maxOutput?: number;
  context?: number;
  /** Provider batches' price (OpenAI, Anthropic and Gemini bill them apart); default half of each rate. */
  batch?: Rates;
  /** The flex and priority tiers' prices (issue 35); default from the provider's published ratio (providers/tiers.ts). */
  flex?: Rates;
  priority?: Rates;
}

export type PriceTable = Map<string, Price>;

/** `input output cached? cacheWrite?` as rates. */
function rates(input?: string, output?: string, cached?: string, cacheWrite?: string): Rates {
  const r: Rates = { input: Number(input), output: Number(output) };
  if (cached !== undefined) r.cached = Number(cached);
  if (cacheWrite !== undefined) r.cacheWrite = Number(cacheWrite);
  return r;
}

/** `provider:model fields...` of a table grouped by provider (`provider:a ...,b ...;provider2:...`). */
function* rowsOf(table: string): Generator<[string, string[]]> {
  for (const group of table.split(";")) {
    const at = group.indexOf(":");
    for (const row of group.slice(at + 1).split(",")) {
      const [model, ...fields] = row.split(" ");
      yield [`${group.slice(0, at)}:${model}`, fields];
    }
  }
}

function builtIn(): PriceTable {
  const t: PriceTable = new Map();
  for (const [name, [context, maxOutput, ...r]] of rowsOf(MODELS)) t.set(name, Object.assign(rates(...r), { context: Number(context), maxOutput: Number(maxOutput) }));
  for (const [name, [above, ...r]] of rowsOf(LONG_BANDS)) t.get(name)!.long = { above: Number(above), ...rates(...r) };
  return t;
}

const BUILT_IN = builtIn();
let parsed: { raw: unknown; table: PriceTable } | null = null;

const FIELDS = ["input", "output", "cached", "cacheWrite"] as const;

const HELP =
  "needs input and output (USD per million tokens, >= 0), optionally cached, cacheWrite; batch, flex and priority (the same fields); " +
  "long ({above, input, output, ...}: the rates past a prompt of `above` tokens); maxOutput and context (whole tokens)";

/**
 * The table with PRICES over it: a JSON object (or a string holding one) of `provider:model` or
 * `model` to `{ input, output, cached?, cacheWrite? }` (USD per million tokens), with optional
 * `batch`, `flex`, `priority` and `long` rates and the model's `maxOutput` and `context`. A name
 * the built-in table knows keeps its `maxOutput` and `context` unless PRICES gives them (they are
 * the model's, not its price). A malformed one is a ConfigError naming PRICES, never a guess.
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
    const p = readPrice(v, BUILT_IN.get(name));
    if (!p) throw new ConfigError(`PRICES[${JSON.stringify(name.slice(0, 64))}] ${HELP}`);
    table.set(name, p);
  }
  // A model priced here is priced so at every location: the built-in rows of one location (Vertex's
  // `global/`, usage/prices NAME_PARTS) step aside unless named here too.
  for (const name of Object.keys(json as object)) {
    const i = name.indexOf(":");
    if (i < 0 || name.includes("/")) continue;
    const [provider, model] = [name.slice(0, i + 1), `/${name.slice(i + 1)}`];
    for (const k of BUILT_IN.keys()) if (k.startsWith(provider) && k.endsWith(model) && !Object.hasOwn(json as object, k)) table.delete(k);
  }
  parsed = { raw, table };
  return table;
}

/** The prices a price may carry of its own: a provider batch's and the tiers'. */
const NESTED = ["batch", "flex", "priority"] as const;

const isRate = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x >= 0;
const isCount = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;

/** One object of rates, or null when it is not one. */
function readRates(v: unknown): Rates | null {
  const o = v as Record<string, unknown>;
  if (typeof v !== "object" || v === null || FIELDS.some((f) => o[f] !== undefined && !isRate(o[f]))) return null;
  if (o.input === undefined || o.output === undefined) return null;
  const r: Rates = { input: o.input as number, output: o.output as number };
  if (o.cached !== undefined) r.cached = o.cached as number;
  if (o.cacheWrite !== undefined) r.cacheWrite = o.cacheWrite as number;
  return r;
}

/** One price of PRICES (over the built-in `base` of that name), or null when it is not one. */
function readPrice(v: unknown, base?: Price): Price | null {
  const p: Price | null = readRates(v);
  if (!p) return null;
  const o = v as Record<string, unknown>;
  for (const k of NESTED) {
    if (o[k] === undefined) continue;
    const q = readRates(o[k]);
    if (!q) return null;
    p[k] = q;
  }
  if (o.long !== undefined) {
    const long = readRates(o.long);
    const above = (o.long as { above?: unknown }).above;
    if (!long || !isCount(above)) return null;
    p.long = { above: above as number, ...long };
  }
  for (const k of ["maxOutput", "context"] as const) {
    if (o[k] !== undefined && !isCount(o[k])) return null;
    const n = (o[k] as number | undefined) ?? base?.[k];
    if (n !== undefined) p[k] = n;
  }
  return p;
}

/** What a provider batch's answer costs: the price's own `batch`, else half of each rate. */
export function batchPrice(p: Price): Price {
  return p.batch ? withBounds(p.batch, p) : scaled(p, 0.5);
}

function scaleRates(r: Rates, k: number): Rates {
  const q: Rates = { input: r.input * k, output: r.output * k };
  if (r.cached !== undefined) q.cached = r.cached * k;
  if (r.cacheWrite !== undefined) q.cacheWrite = r.cacheWrite * k;
  return q;
}

/** `p` with every rate (its long-context band's too) times `k`. */
function scaled(p: Price, k: number): Price {
  const q: Price = withBounds(scaleRates(p, k), p);
  if (p.long) q.long = { above: p.long.above, ...scaleRates(p.long, k) };
  return q;
}

/** Rates of a tier or a batch, with the model's own bounds (what one answer may be). */
function withBounds(r: Rates, p: Price): Price {
  const q: Price = { ...r };
  if (p.maxOutput !== undefined) q.maxOutput = p.maxOutput;
  if (p.context !== undefined) q.context = p.context;
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
  if (own) return withBounds(own, p);
  if (ratio === undefined) return null;
  return ratio === "batch" ? batchPrice(p) : scaled(p, ratio);
}

/** `gpt-4o-2024-08-06`, `claude-sonnet-4-20250514`, `mistral-large-latest`: the name without its date or tag. */
const baseName = (model: string) => model.replace(/(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$/, "");

/** The price of a provider's model: `provider:model`, then `model`, then both again without a date suffix. */
export function priceOf(table: PriceTable, provider: string, model: string): Price | null {
  const names = [model, baseName(model)];
  let bare = model;
  for (const part of Object.hasOwn(NAME_PARTS, provider) ? NAME_PARTS[provider]! : []) {
    bare = bare.replace(part, "");
    names.push(bare, baseName(bare));
  }
  for (const m of new Set(names)) {
    const p = table.get(`${provider}:${m}`) ?? table.get(m);
    if (p) return p;
  }
  return null;
}

/**
 * A price at least as dear as each of `prices` in every rate, and as wide in its bounds (the same
 * model at the tiers a request may be served at, or a pool's members' prices for it): what a budget
 * reserves at when it cannot know which will serve. A bound one of them leaves out is left out.
 */
export function dearest(prices: readonly Price[]): Price {
  const [first, ...rest] = prices;
  let p: Price = { ...first! };
  for (const q of rest) p = higher(p, q);
  return p;
}

const max = (a: number | undefined, b: number | undefined, fa: number, fb: number) => Math.max(a ?? fa, b ?? fb);

function higherRates(a: Rates, b: Rates): Rates {
  const r: Rates = { input: Math.max(a.input, b.input), output: Math.max(a.output, b.output) };
  if (a.cached !== undefined || b.cached !== undefined) r.cached = max(a.cached, b.cached, a.input, b.input);
  if (a.cacheWrite !== undefined || b.cacheWrite !== undefined) r.cacheWrite = max(a.cacheWrite, b.cacheWrite, a.input, b.input);
  return r;
}

function higher(a: Price, b: Price): Price {
  const p: Price = { ...a, ...higherRates(a, b) };
  if (a.long || b.long) p.long = { above: Math.min(a.long?.above ?? Infinity, b.long?.above ?? Infinity), ...higherRates(a.long ?? a, b.long ?? b) };
  for (const k of ["maxOutput", "context"] as const) {
    if (a[k] === undefined || b[k] === undefined) delete p[k];
    else p[k] = Math.max(a[k], b[k]);
  }
  return p;
}

/** The rates a request whose prompt is `input` tokens is billed at: its model's long-context band's past its threshold. */
export const ratesFor = (p: Price, input: number): Rates => (p.long && input > p.long.above ? p.long : p);

/**
 * USD for `t` at `p`. Cached and cache-write tokens are parts of the input, priced at their own
 * rates; a prompt past the model's long-context band bills every token at the band's rates.
 */
export function costOf(t: Tokens, p: Price): number {
  const r = ratesFor(p, t.input);
  const plain = Math.max(0, t.input - t.cached - t.cacheWrite);
  return (plain * r.input + t.cached * (r.cached ?? r.input) + t.cacheWrite * (r.cacheWrite ?? r.input) + t.output * r.output) / 1e6;
}
