// What an operator may ask for when minting a virtual key (`POST /admin/virtual-keys`), checked
// field by field: a bad field is named, and nothing is minted.
import { isPeriod, PERIODS, type Period } from "../budget/period";
import { isLane, type Lane } from "../limiter/lanes";
import { DEFAULT_SCOPES, type Scope, SCOPES } from "../providers/endpoints";
import { TIERS, type Tier } from "../providers/dialect";
import { LABEL } from "../providers/key";
import { isTier } from "../tiers/choose";

/** Whose cache entries a key reads and writes: its own (default), or its pool's, shared with the pool's other keys that share. */
export const CACHE_SCOPES = ["key", "pool"] as const;
export type CacheScope = (typeof CACHE_SCOPES)[number];

/** A key as minted: everything stored but its HMAC and timestamps. */
export interface KeySpec {
  name: string;
  pool: string;
  /** The highest lane its requests may use; null: any. */
  lane: Lane | null;
  /** The most of its requests in flight at once, across every member of its pool; null: no cap. */
  maxConcurrency: number | null;
  /** USD the key may spend per budgetPeriod; null: no budget (and no budget call on its requests). */
  budget: number | null;
  budgetPeriod: Period | null;
  /** The endpoint groups it may call (providers/endpoints.ts). */
  scopes: Scope[];
  /** null: its pool's `sharedCache` decides. */
  cache: CacheScope | null;
  /** The service tier its requests go at unless they say otherwise (issue 35); null: its lane's (TIERS), or none. */
  tier: Tier | null;
}

const given = (v: unknown) => v !== undefined && v !== null;

/** The spec, or the message of a 400 naming the first bad field. */
export function parseSpec(body: unknown): KeySpec | string {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return "body: must be a JSON object";
  const { name, pool, lane, maxConcurrency, budget, budgetPeriod, scopes, cache, tier } = body as Record<string, unknown>;
  if (typeof name !== "string" || !LABEL.test(name) || name.length > 64) return "name: 1-64 of A-Z a-z 0-9 . _ @ + / -";
  if (typeof pool !== "string") return "pool: must name a pool in POOLS";
  if (given(lane) && !isLane(lane)) return "lane: high, normal or low";
  if (given(maxConcurrency) && !(Number.isSafeInteger(maxConcurrency) && (maxConcurrency as number) >= 1 && (maxConcurrency as number) <= 100_000))
    return "maxConcurrency: a whole number from 1 to 100000";
  if (given(budget) && !(typeof budget === "number" && Number.isFinite(budget) && budget > 0)) return "budget: USD, a number above 0";
  if (given(budgetPeriod) && !isPeriod(budgetPeriod)) return `budgetPeriod: ${PERIODS.join(", ")}`;
  if (given(budgetPeriod) && typeof budget !== "number") return "budgetPeriod: needs a budget";
  if (given(scopes) && !(Array.isArray(scopes) && scopes.length > 0 && scopes.every((s) => (SCOPES as readonly unknown[]).includes(s))))
    return `scopes: a non-empty list of ${SCOPES.join(", ")}`;
  if (given(cache) && !(CACHE_SCOPES as readonly unknown[]).includes(cache)) return `cache: ${CACHE_SCOPES.join(" or ")}`;
  if (given(tier) && !isTier(tier)) return `tier: ${TIERS.join(", ")}`;
  const budgeted = typeof budget === "number";
  return {
    name,
    pool,
    lane: isLane(lane) ? lane : null,
    maxConcurrency: given(maxConcurrency) ? (maxConcurrency as number) : null,
    budget: budgeted ? budget : null,
    budgetPeriod: budgeted ? (isPeriod(budgetPeriod) ? budgetPeriod : "total") : null,
    scopes: given(scopes) ? [...new Set(scopes as Scope[])] : [...DEFAULT_SCOPES],
    cache: given(cache) ? (cache as CacheScope) : null,
    tier: isTier(tier) ? tier : null,
  };
}
