import { Hono } from "hono";
import { ConfigError } from "../config/env";
import type { Env } from "../env";
import { keyHash, mintKey } from "../keys/keys";
import { forgetKeys } from "../keys/lookup";
import { virtualKeysOf } from "../keys/object";
import { isLane } from "../limiter/lanes";
import { poolsOf } from "../pools/config";
import { LABEL } from "../providers/key";
import { providers } from "../providers/registry";
import { gatewayError } from "../proxy/errors";

const NO_STORE = { "cache-control": "no-store" };
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...NO_STORE } });
const bad = (message: string) => gatewayError("invalid_request", message, NO_STORE);

/** `/admin/virtual-keys`: mounted behind the admin guard (routes/admin.ts). */
export const virtualKeys = new Hono<{ Bindings: Env }>();

/** Mints a key for a pool. The key is in this answer only; the store keeps its HMAC. */
virtualKeys.post("/", async (c) => {
  let body: Record<string, unknown>;
  try {
    body = await c.req.json();
  } catch {
    return bad("body: must be a JSON object");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return bad("body: must be a JSON object");
  const { name, pool, lane, maxConcurrency } = body;
  if (typeof name !== "string" || !LABEL.test(name) || name.length > 64) return bad("name: 1-64 of A-Z a-z 0-9 . _ @ + / -");
  if (typeof pool !== "string") return bad("pool: must name a pool in POOLS");
  if (lane !== undefined && lane !== null && !isLane(lane)) return bad("lane: high, normal or low");
  if (maxConcurrency !== undefined && maxConcurrency !== null && !(Number.isSafeInteger(maxConcurrency) && (maxConcurrency as number) >= 1 && (maxConcurrency as number) <= 100_000))
    return bad("maxConcurrency: a whole number from 1 to 100000");
  let key: string, hash: string;
  try {
    if (!Object.hasOwn(poolsOf(c.env.POOLS, providers(c.env.PROVIDERS), c.env), pool)) return bad(`pool: POOLS has no pool named ${JSON.stringify(pool.slice(0, 64))}`);
    key = mintKey();
    hash = await keyHash(c.env, key);
  } catch (err) {
    if (err instanceof ConfigError) return gatewayError("config_error", err.message, NO_STORE);
    throw err;
  }
  const made = await virtualKeysOf(c.env.VIRTUAL_KEYS).create({ name, pool, lane: (lane as never) ?? null, maxConcurrency: (maxConcurrency as number) ?? null }, hash);
  if (!made) return gatewayError("conflict", `a virtual key named ${JSON.stringify(name)} exists; delete it first`, NO_STORE);
  return json({ name, key, pool, lane: made.lane, maxConcurrency: made.maxConcurrency, createdAt: made.createdAt }, 201);
});

/** Every key's name, pool, lane, cap, createdAt and lastUsed: never the key. */
virtualKeys.get("/", async (c) => json({ virtualKeys: await virtualKeysOf(c.env.VIRTUAL_KEYS).list() }));

/** Revokes: refused at once here, and within about two seconds everywhere (keys/lookup.ts). */
virtualKeys.delete("/:name", async (c) => {
  const gone = await virtualKeysOf(c.env.VIRTUAL_KEYS).remove(c.req.param("name"));
  forgetKeys();
  return gone ? new Response(null, { status: 204, headers: NO_STORE }) : gatewayError("not_found", "no virtual key of that name", NO_STORE);
});
