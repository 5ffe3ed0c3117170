/**
 * @module A tier in a request body and in an answer, as a dialect row's `tiers` column says
 * (providers/tiers.ts): whether the provider offers it for this model and route, the caller's own
 * field, the body with the field written, and the tier the answer says served it. Pure.
 */
import type { Tier, TierSpec } from "../providers/dialect";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Whether a request to `route` for `model` may be sent at `tier`. Standard always may: it is where
 * a tier not offered goes (nothing refused for it).
 */
export function offered(spec: TierSpec | undefined, tier: Tier, model: string, route: string): boolean {
  if (tier === "standard") return true;
  if (!spec || spec.values[tier] === undefined || !spec.routes.test(route)) return false;
  return spec.models?.[tier]?.test(model) ?? true;
}

/** A provider's name for a tier (`default`, `on_demand`, Gemini's `SERVICE_TIER_FLEX`) as one of ours; null when it is none we know. */
export function tierNamed(spec: TierSpec, raw: unknown): Tier | null {
  if (typeof raw !== "string") return null;
  const name = raw.trim().toLowerCase().replace(/^service_tier_/, "");
  return Object.hasOwn(spec.names, name) ? spec.names[name]! : null;
}

/** The row's field as the body spells it (its own name, else an alias); undefined when absent. */
export function tierField(spec: TierSpec, json: unknown): unknown {
  if (!isObj(json)) return undefined;
  for (const f of [spec.field, ...(spec.aliases ?? [])]) if (json[f] !== undefined) return json[f];
  return undefined;
}

/** The tier the caller's own body names in the row's field, on a route that takes it; null: none (or one we do not know). */
export function bodyTier(spec: TierSpec | undefined, json: unknown, route: string): Tier | null {
  if (!spec || !spec.routes.test(route)) return null;
  return tierNamed(spec, tierField(spec, json));
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * The body (`json`, parsed from `bytes`) with the row's field set to the tier's value, or removed
 * for a tier the row has no value for (standard where the provider has no word for it: its
 * default). A body that is not a JSON object goes as it came.
 */
export function withTier(json: unknown, bytes: Uint8Array, spec: TierSpec, tier: Tier): Uint8Array {
  if (!isObj(json)) return bytes;
  const value = spec.values[tier];
  const rest = { ...json };
  for (const f of [spec.field, ...(spec.aliases ?? [])]) delete rest[f];
  return enc.encode(JSON.stringify(value === undefined ? rest : { ...rest, [spec.field]: value }));
}

const at = (json: unknown, path: readonly string[]): unknown => path.reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), json);

/** The tier an answer says served it: the row's header, else the first of its body paths that names one; null when it says nothing. */
export function servedTier(spec: TierSpec | undefined, headers: Headers | null, json: unknown): Tier | null {
  if (!spec) return null;
  const header = spec.served.header && headers ? tierNamed(spec, headers.get(spec.served.header)) : null;
  if (header) return header;
  for (const path of spec.served.at) {
    const t = tierNamed(spec, at(json, path));
    if (t) return t;
  }
  return null;
}
