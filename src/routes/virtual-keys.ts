import { Hono } from "hono/tiny";
import { ConfigError } from "../config/env";
import type { Env } from "../env";
import { shardOfName } from "../keys/format";
import { keyHash, mintKey } from "../keys/keys";
import { forgetKeys } from "../keys/lookup";
import type { VirtualKey } from "../keys/object";
import { HOMES, homeOf, KeyStoreUnavailable, keyStoreUnavailable, LEGACY_HOME, storeCall } from "../keys/store";
import { budgetOf, type Spend } from "../budget/object";
import { parseSpec } from "../keys/spec";
import { poolsOf } from "../pools/config";
import { providers } from "../providers/registry";
import { gatewayError } from "../proxy/errors";

const NO_STORE = { "cache-control": "no-store" };
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...NO_STORE } });
const bad = (message: string) => gatewayError("invalid_request", message, NO_STORE);

/** `/admin/virtual-keys`: mounted behind the admin guard (routes/admin.ts). */
export const virtualKeys = new Hono<{ Bindings: Env }>();
// A store that fails is a 503 here too; anything else goes on to the app's handler.
virtualKeys.onError((err) => {
  if (err instanceof KeyStoreUnavailable) return keyStoreUnavailable(err, NO_STORE);
  throw err;
});

/**
 * Mints a key for a pool, in its name's shard. The key is in this answer only; the store keeps its
 * HMAC. A name the old instance still holds is taken too (nothing is added there any more).
 */
virtualKeys.post("/", async (c) => {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return bad("body: must be a JSON object");
  }
  const spec = parseSpec(body);
  if (typeof spec === "string") return bad(spec);
  const shard = shardOfName(spec.name);
  let key: string, hash: string;
  try {
    if (!Object.hasOwn(poolsOf(c.env.POOLS, providers(c.env.PROVIDERS), c.env), spec.pool)) return bad(`pool: POOLS has no pool named ${JSON.stringify(spec.pool.slice(0, 64))}`);
    key = await mintKey(c.env, shard);
    hash = await keyHash(c.env, key);
  } catch (err) {
    if (err instanceof ConfigError) return gatewayError("config_error", err.message, NO_STORE);
    throw err;
  }
  const oldName = await storeCall(c.env.VIRTUAL_KEYS, LEGACY_HOME, (s) => s.has(spec.name));
  const made = oldName ? false : await storeCall<VirtualKey | false>(c.env.VIRTUAL_KEYS, homeOf(shard), (s) => s.create(spec, hash));
  if (!made) return gatewayError("conflict", `a virtual key named ${JSON.stringify(spec.name)} exists; delete it first`, NO_STORE);
  const { lastUsed: _, ...shown } = made;
  return json({ ...shown, key }, 201);
});

/** Every key's name, pool, lane, cap, budget, createdAt and lastUsed, and its spend this period: never the key. All shards, by name. */
virtualKeys.get("/", async (c) => {
  const shards = await Promise.all(HOMES.map((home) => storeCall(c.env.VIRTUAL_KEYS, home, (s) => s.list())));
  const keys = shards.flat().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return json({ virtualKeys: await Promise.all(keys.map(async (k) => ({ ...k, spend: await spendOf(c.env, k) }))) });
});

/** A budgeted key's spend in its current period; null without a budget, or when its object does not answer. */
async function spendOf(env: Env, k: VirtualKey): Promise<Spend | null> {
  if (k.budget === null) return null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), 3_000)));
  try {
    return await Promise.race([budgetOf(env, k).status(k.budgetPeriod ?? "total"), late]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** Revokes, from the name's shard or the old instance: refused at once here, and within about two seconds everywhere (keys/lookup.ts). */
virtualKeys.delete("/:name", async (c) => {
  const name = c.req.param("name");
  const gone = await Promise.all([LEGACY_HOME, homeOf(shardOfName(name))].map((home) => storeCall(c.env.VIRTUAL_KEYS, home, (s) => s.remove(name))));
  forgetKeys();
  return gone.includes(true) ? new Response(null, { status: 204, headers: NO_STORE }) : gatewayError("not_found", "no virtual key of that name", NO_STORE);
});
