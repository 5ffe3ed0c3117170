// What the gateway needs to know of a request body before it queues: its key, cost and whether
// the answer will stream, read from the body's JSON (parsed once, by the request's record: call.ts).
import { estimateFor } from "../policy/estimate";
import type { Tier, TierSpec } from "../providers/dialect";
import { DIALECTS } from "../providers/dialects";
import { countsTokens, type KeyParts, limitKey, requestModel, routeOf } from "../providers/key";
import { bodyTier, tierField } from "../tiers/body";
import { askForUsage } from "../usage/meter";
import { type PriceTable, priceOf } from "../usage/prices";
import type { Provider } from "../providers/table";
import type { Asked } from "./asked";

export interface Described {
  key: KeyParts;
  cost: number;
  /** Of `cost`, the output allowance: what a key whose row limits generated tokens apart is charged it in (policy/estimate.ts costFor). */
  out: number;
  /** It holds media priced by their bytes (a document, audio), which a provider may count far lower (policy/estimate.ts). */
  unsure?: true;
  /** The caller asked for a streamed answer: it is passed through as it comes, whatever its type. */
  stream: boolean;
  /** The model the request names (the ledger's and the price table's), whatever its key's label. */
  model: string;
  /** What goes upstream: the body, or a copy asking for a stream's usage (`strip`: hide it again). */
  sent: { bytes: Uint8Array; strip: boolean };
  /** The body's own `model` field (a pool member maps it to a deployment), without the rest of the body. */
  body: { model?: unknown };
  /** The service tier the caller's own body names in its provider's field (issue 35), or null. */
  tier: Tier | null;
  /** That field as written, when it names no tier the row knows (OpenAI's `scale`): a tier nobody can price. */
  unknownTier: string | null;
  /** The path after the provider (and Azure's resource): what a row's tiers are offered on. */
  route: string;
}

/**
 * What a body (read by the body stage, proxy/held.ts; `json` its JSON, null: none) asks: its key,
 * cost, model and what goes upstream. `proven`: whether the credential has proven the identity its
 * path names (providers/key.ts limitKey). `prices`: where the row reserves a model's whole output for
 * a body that names no limit, the model's `maxOutput` is read there (policy/estimate.ts estimateFor).
 */
export async function describe(
  p: Provider, headers: Headers, url: URL, rest: string, bytes: Uint8Array, json: unknown, label: string | null,
  proven?: (credentialHash: string, identity: string) => boolean, prices?: PriceTable,
): Promise<Described> {
  const key = await limitKey(p, headers, url, rest, json, label, proven);
  const model = requestModel(p, rest, json)?.slice(0, 128) ?? "*";
  const bodyModel = typeof json === "object" && json !== null ? (json as { model?: unknown }).model : undefined;
  const route = routeOf(p, rest);
  const d = DIALECTS[p.dialect];
  const maxOutput = d.limits.unstatedOutput && prices ? priceOf(prices, p.name, model)?.maxOutput : undefined;
  const cost = countsTokens(p, rest) ? COUNT_COST : estimateFor(d, rest, json, bytes.byteLength, maxOutput);
  return {
    key, ...cost, stream: asksToStream(json, rest, url.search), model, sent: askForUsage(p, rest, url.search, json, bytes), body: { model: bodyModel },
    ...bodyTiers(d.tiers, json, route), route,
  };
}

/** A token count draws a request from its own key (providers/key.ts COUNT_KEY) and no tokens: it generates none, and Anthropic limits counts by requests alone. */
const COUNT_COST = { cost: 1, out: 0 } as const;

/** OpenAI-style `"stream": true`, Gemini's `:streamGenerateContent` (SSE or not), `alt=sse`. */
export function asksToStream(json: unknown, rest: string, search: string): boolean {
  if (typeof json === "object" && json !== null && (json as { stream?: unknown }).stream === true) return true;
  return /:streamGenerateContent\b/i.test(rest) || /[?&]alt=sse\b/i.test(search);
}

/** The tier the body names in its provider's field, and the field as written when it names none the row knows. */
function bodyTiers(spec: TierSpec | undefined, json: unknown, route: string): { tier: Tier | null; unknownTier: string | null } {
  const tier = bodyTier(spec, json, route);
  const raw = spec && !tier && spec.routes.test(route) ? tierField(spec, json) : undefined;
  return { tier, unknownTier: raw === undefined || raw === null ? null : String(raw).slice(0, 32) };
}
