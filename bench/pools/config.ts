// The pools the benchmark's pool rows (issue 19) run through: POOLS and the members' keys, given to
// the gateway as vars (`--var OPENAI_KEY_...:sk-...`, as `wrangler secret put` would), and the
// stand-in's limits per member credential (keyLimits). Every run gets keys of its own.
import { randomBytes } from "node:crypto";
import type { KeyLimits } from "../../test/support/standin/index.ts";
import { Admin, type MintedKey, type Pools, poolVars } from "../../test/support/pools.ts";
import type { Ctx } from "../context.ts";

const RUN = randomBytes(4).toString("hex");

/** A member: its name in POOLS, the secret's name, and the provider key that secret holds. */
export interface Member {
  name: string;
  secret: string;
  key: string;
}

const member = (name: string): Member => ({ name, secret: `BENCH_KEY_${name.toUpperCase().replaceAll("-", "_")}`, key: `sk-bench-${name}-${RUN}` });

export const MEMBERS = {
  even: [member("even-a"), member("even-b")],
  skew: [member("skew-a"), member("skew-b")],
  broke: [member("ok-a"), member("ok-b"), member("broke")],
  solo: [member("solo")],
  overhead: [member("ov-a"), member("ov-b")],
  overhead1: [member("ov-solo")],
} as const;

export type PoolName = keyof typeof MEMBERS;

const pools = (): Pools =>
  Object.fromEntries(Object.entries(MEMBERS).map(([pool, ms]) => [`bench-${pool}`, { provider: "openai", members: ms.map((m) => ({ name: m.name, secret: m.secret })) }]));

/** The gateway's vars for every bench pool (POOL_OUT_MS stays at its default, as deployed). */
export function benchPoolVars(): Record<string, string> {
  return poolVars(pools(), Object.fromEntries(Object.values(MEMBERS).flat().map((m) => [m.secret, m.key])));
}

/** The stand-in's keyLimits for a pool's members, e.g. {rpm: 600} each, or one limit per member. */
export function limitsOf(ms: readonly Member[], limits: KeyLimits | KeyLimits[]): Record<string, KeyLimits> {
  return Object.fromEntries(ms.map((m, i) => [m.key, Array.isArray(limits) ? limits[i]! : limits]));
}

let minted = 0;

/** A virtual key of its own for one run on a pool. */
export function mintFor(ctx: Ctx, pool: PoolName, extra: { lane?: string; maxConcurrency?: number } = {}): Promise<MintedKey> {
  return new Admin(ctx.gateway.url, ctx.adminToken).mint(`bench-${pool}-${RUN}-${++minted}`, `bench-${pool}`, extra);
}

export const admin = (ctx: Ctx) => new Admin(ctx.gateway.url, ctx.adminToken);
