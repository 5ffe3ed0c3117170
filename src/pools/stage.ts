// The virtual key stage of the request path: a caller presenting an `sgk-` key is sent through its
// key's pool, under its key's name and lane; anyone else passes through untouched.
import { DIALECTS } from "../providers/dialects";
import { ConfigError } from "../config/env";
import type { Env } from "../env";
import { type KeyRef, type Refusal, resolveKey } from "../keys/lookup";
import type { Found } from "./admit";
import type { VirtualKey } from "../keys/object";
import { KeyStoreUnavailable, keyStoreUnavailable } from "../keys/store";
import { LANES, type Lane } from "../limiter/lanes";
import type { LimiterCalls } from "../proxy/limiter-client";
import type { Asked } from "../proxy/asked";
import type { Who } from "../proxy/caller";
import { gatewayError } from "../proxy/errors";
import type { KeyMeta } from "../limiter/types";
import { allowed, scopeOf } from "../providers/endpoints";
import { batchesGrant } from "../batches/stage";
import type { Dialect } from "../providers/dialect";
import type { Provider } from "../providers/table";
import { type Pool, poolsOf, serves } from "./config";
import { memberRequest, virtualKeyIn } from "./member";
import { PoolRoute } from "./route";

export type KeyStage = { kind: "none" } | { kind: "refused"; res: Response } | { kind: "pool"; vk: VirtualKey; pool: Pool; ref: KeyRef };

const REFUSED: Record<Refusal, string> = {
  forged: "this is not a virtual key this gateway minted (its check characters do not match)",
  legacy: "this virtual key is unknown or revoked: the gateway holds no keys of this older format any more",
  unknown: "this virtual key is unknown or revoked",
};

/**
 * Looks the presented virtual key up (unless the door already did: `known`): forged, unknown or revoked is 401 and goes nowhere (a store
 * that fails, 503); an endpoint its scopes do not grant is 403, and a label (which would pick the
 * member's limiter) 400, before anything is read or sent.
 */
export async function virtualKeyStage(env: Env, asked: Asked, table: Record<string, Provider>, known?: Found): Promise<KeyStage> {
  const { provider } = asked;
  const presented = known ? null : virtualKeyIn(asked.headers, asked.incoming);
  if (!known && !presented) return { kind: "none" };
  try {
    // Admitted by its key (admit.ts): already looked up.
    const found = known ?? (await resolveKey(env, presented!));
    if (found.kind === "refused") return { kind: "refused", res: gatewayError("unauthorized", REFUSED[found.why]) };
    const { vk, ref } = found;
    const pools = poolsOf(env.POOLS, table, env);
    const pool = Object.hasOwn(pools, vk.pool) ? pools[vk.pool] : undefined;
    if (!pool) return { kind: "refused", res: gatewayError("config_error", `virtual key ${vk.name} names pool ${vk.pool}, which POOLS does not define`) };
    if (!serves(pool, provider))
      return { kind: "refused", res: gatewayError("invalid_request", `virtual key ${vk.name} is for pool ${pool.name} (${pool.provider}); this route is ${provider.name}`) };
    // The batches scope reaches the files endpoints a batch job needs; the batch stage keeps the key to its own.
    if (!allowed(vk.scopes, provider.flavour, asked.method, asked.rest) && !batchesGrant(vk.scopes, provider.flavour, asked.method, asked.rest)) {
      const group = scopeOf(provider.flavour, asked.method, asked.rest);
      const needs = group ? `the scope ${group}` : "the scope all";
      return { kind: "refused", res: gatewayError("forbidden", `virtual key ${vk.name} may not call ${asked.method} ${asked.rest.slice(0, 200)}: it needs ${needs} (it has ${vk.scopes.join(", ")})`) };
    }
    // Members' limiters are the operator's: a holder does not choose which one (or how many) it uses.
    if (asked.label !== null) return { kind: "refused", res: gatewayError("invalid_request", "x-slotgate-limit-key cannot be used with a virtual key: its pool's keys are grouped by the operator") };
    return { kind: "pool", vk, pool, ref };
  } catch (err) {
    if (err instanceof ConfigError) return { kind: "refused", res: gatewayError("config_error", err.message) };
    if (err instanceof KeyStoreUnavailable) return { kind: "refused", res: keyStoreUnavailable(err) };
    throw err;
  }
}

const rank = (l: Lane) => LANES.indexOf(l);

/**
 * Whose cache entries a virtual key's requests read and write: its own by default (a key made
 * again under an old name starts empty), its pool's only where the key or its pool opts in.
 */
export function cacheTenant(vk: VirtualKey, pool: Pool): string {
  const shared = vk.cache ? vk.cache === "pool" : pool.sharedCache;
  return shared ? `pool:${pool.name}` : `vk:${vk.name}:${vk.createdAt}`;
}

/** The virtual key is the caller; its lane is the highest a request may ask for (a header may only lower it). */
export function whoFor(vk: VirtualKey, asked: Who): Who {
  const wanted = asked.priority ?? "normal";
  const priority = vk.lane && rank(vk.lane) > rank(wanted) ? vk.lane : wanted;
  return { caller: vk.name, priority };
}

export interface RouteInput {
  pool: Pool;
  vk: VirtualKey;
  rest: string;
  search: string;
  headers: Headers;
  /** The body's JSON (the request's one parse). */
  json: unknown;
  outMs: number;
  waitUntil: (p: Promise<unknown>) => void;
  limiterFor: (meta: KeyMeta) => LimiterCalls;
  /** Only members whose dialect passes serve it (a request that may not fall back from its tier: tiers/plan.ts). */
  serves?: (d: Dialect) => boolean;
}

/** The pool's members that can serve this request, as targets; a 400 when none can. */
export async function poolRoute(r: RouteInput): Promise<PoolRoute | Response> {
  const asking = { rest: r.rest, search: r.search, headers: r.headers, json: r.json, family: r.pool.family, waitUntil: r.waitUntil };
  const built = await Promise.all(r.pool.members.map((m) => (!r.serves || r.serves(DIALECTS[m.provider.dialect]) ? memberRequest(m, asking) : null)));
  const members = r.pool.members.flatMap((m, i) => {
    const req = built[i];
    if (!req) return [];
    // Only the member chosen pays for its headers and its limiter's stub.
    let limiter: LimiterCalls | undefined;
    const target = {
      url: req.url,
      key: req.key,
      dialect: DIALECTS[m.provider.dialect],
      get headers() {
        return req.headers;
      },
      get limiter() {
        return (limiter ??= r.limiterFor(req.key));
      },
      ...(req.authorizer && { authorizer: req.authorizer }),
      ...(req.body && { body: req.body }),
      ...(req.answer && { answer: req.answer }),
      ...(req.priceAs && { priceAs: req.priceAs }),
    };
    return [{ name: m.name, credential: m.credential, target }];
  });
  if (members.length === 0) return gatewayError("invalid_request", `no member of pool ${r.pool.name} serves this request (model or path)`);
  return new PoolRoute(r.pool.name, members, r.outMs);
}
