/**
 * @module Which service tier a request goes at, by policy (issue 35): the caller's own body field
 * wins, then `x-slotgate-tier`, then its virtual key's tier, then its lane's (`TIERS`); none of
 * them: nothing is written and the provider's default serves. Pure.
 */
import { ConfigError } from "../config/error";
import { isLane, type Lane, LANES } from "../limiter/lanes";
import { TIERS, type Tier } from "../providers/dialect";

export const isTier = (x: unknown): x is Tier => typeof x === "string" && (TIERS as readonly string[]).includes(x);

/** After a tier's capacity refusals: go at standard (the default), or give the refusal back. */
export type Fallback = "standard" | "none";

/** The tier each lane goes at by default (`TIERS`). */
export type LaneTiers = Partial<Record<Lane, Tier>>;

/** What a caller's headers ask of the tier. */
export interface TierAsk {
  tier?: Tier;
  fallback: Fallback;
}

/** Who chose the tier: the caller's body, its header, its virtual key, its lane. */
export type ChosenBy = "body" | "header" | "key" | "lane" | "budget";

const read = (raw: string | null) => raw?.trim().toLowerCase() ?? null;

/** `x-slotgate-tier` and `x-slotgate-tier-fallback`, or the reason one is refused (400). */
export function tierAsk(h: Headers): TierAsk | string {
  const tier = read(h.get("x-slotgate-tier"));
  const fallback = read(h.get("x-slotgate-tier-fallback")) ?? "standard";
  if (tier !== null && !isTier(tier)) return "x-slotgate-tier must be flex, standard or priority";
  if (fallback !== "standard" && fallback !== "none") return "x-slotgate-tier-fallback must be standard or none";
  return tier === null ? { fallback } : { tier, fallback };
}

let parsed: { raw: unknown; tiers: LaneTiers } | null = null;

/**
 * `TIERS`: a JSON object (or a string holding one) of lane to tier, e.g. `{"low":"flex"}`. Unset or
 * empty: none. A malformed one is a ConfigError naming it. Parsed once per value.
 */
export function laneTiers(raw: unknown): LaneTiers {
  if (raw === undefined || raw === "" || raw === null) return {};
  if (parsed?.raw === raw) return parsed.tiers;
  const bad = () => new ConfigError(`TIERS must be a JSON object of lane (${LANES.join(", ")}) to tier (${TIERS.join(", ")}), e.g. {"low":"flex"}`);
  let json = raw;
  if (typeof raw === "string") {
    try {
      json = JSON.parse(raw);
    } catch {
      throw bad();
    }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw bad();
  const tiers: LaneTiers = {};
  for (const [lane, tier] of Object.entries(json)) {
    if (!isLane(lane) || !isTier(tier)) throw bad();
    tiers[lane] = tier;
  }
  parsed = { raw, tiers };
  return tiers;
}

export interface Choice {
  /** The tier the caller's own body names, already in its field (it is never overwritten but to fall back). */
  body: Tier | null;
  /** `x-slotgate-tier`. */
  header?: Tier;
  /** Its virtual key's tier, set when it was minted. */
  key?: Tier | null;
  /** Its lane, for `TIERS`. */
  lane?: Lane;
  lanes: LaneTiers;
}

/** The tier a request goes at and who chose it; null when nobody did. */
export function chooseTier(c: Choice): { tier: Tier; by: ChosenBy } | null {
  if (c.body) return { tier: c.body, by: "body" };
  if (c.header) return { tier: c.header, by: "header" };
  if (c.key) return { tier: c.key, by: "key" };
  const lane = c.lanes[c.lane ?? "normal"];
  return lane ? { tier: lane, by: "lane" } : null;
}
