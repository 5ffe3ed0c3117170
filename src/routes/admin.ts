import type { MiddlewareHandler } from "hono";
import { Hono } from "hono/tiny";
import { bearerOk } from "../auth";
import { cacheStats, purgeCache } from "../cache/admin";
import { parseOverride } from "../config/limits";
import { DASHBOARD_FILES, dashboardFile } from "../dashboard/serve";
import { type DirectoryEntry, directoryOf, LIST_MAX } from "../directory/object";
import type { Env } from "../env";
import type { LimiterSnapshot } from "../limiter/types";
import { gatewayError } from "../proxy/errors";
import { scrape } from "./metrics";
import { usage } from "./usage";
import { memberIndex, poolsView } from "./pools";
import { keyHash } from "../observe/prometheus";
import { virtualKeys } from "./virtual-keys";
import { adminOff } from "./admin-off";

/** One row of `GET /admin/keys`: the contract's seven fields, then what the dashboard's table shows. */
export interface KeyListEntry {
  key: string;
  provider: string;
  model: string;
  limit: number;
  inFlight: number;
  queued: number;
  lastSeen: string | null;
  phase: LimiterSnapshot["concurrency"]["phase"] | null;
  cooldownUntil: string | null;
  metrics: LimiterSnapshot["metrics"] | null;
  /** false when the limiter did not answer in time: the numbers are the Directory's last report. */
  live: boolean;
  /** A pool member's key: its pool and member (names from POOLS); null for a caller's own key. */
  member: { pool: string; member: string } | null;
  /** Who used the key most in the last minute (its busiest caller), null when nobody or not live: rows of one model told apart. */
  caller: string | null;
}

/** A limiter that does not answer within this is listed with its last reported numbers. */
const STATE_TIMEOUT_MS = 3_000;

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

const NO_STORE = { "cache-control": "no-store" };
const adminError = (type: "invalid_config" | "unknown_key" | "not_found" | "invalid_request", message: string) => gatewayError(type, message, NO_STORE);

const ok = (body: unknown) => new Response(JSON.stringify(body), { headers: JSON_HEADERS });

/** Everything under /admin: 404 with no ADMIN_TOKEN (saying so: admin-off.ts); the token for all but the dashboard's HTML shell. */
const guard: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const expected = c.env.ADMIN_TOKEN;
  if (!expected) return adminOff(c.req.raw);
  const shell = Object.hasOwn(DASHBOARD_FILES, c.req.path) && (c.req.method === "GET" || c.req.method === "HEAD");
  if (!shell && !(await bearerOk(expected, c.req.header("authorization"))))
    return gatewayError("unauthorized", "admin routes need Authorization: Bearer <ADMIN_TOKEN>", NO_STORE);
  await next();
};

export const admin = new Hono<{ Bindings: Env }>();
// Hono's "/admin/*" matches "/admin" itself too: one guard covers the dashboard and the API.
admin.use("/admin/*", guard);

for (const [path, file] of Object.entries(DASHBOARD_FILES)) admin.get(path, (c) => dashboardFile(c.env, new URL(c.req.url), file));

admin.get("/admin/keys", async (c) => {
  const [{ entries, total }, members] = await Promise.all([directoryOf(c.env.DIRECTORY).list(LIST_MAX), memberIndex(c.env)]);
  const keys = await Promise.all(entries.map((e) => live(c.env, e, members.get(`${e.provider}:${keyHash(e.key)}`) ?? null)));
  keys.sort((a, b) => (b.lastSeen ?? "").localeCompare(a.lastSeen ?? "") || a.key.localeCompare(b.key));
  return ok({ keys, total });
});

admin.get("/admin/keys/:key", async (c) => {
  const key = c.req.param("key");
  if (!(await known(c.env, key))) return unknownKey(key);
  return ok(await limiter(c.env, key).state());
});

/** Every key's upstream attempts by provider and status class, listed keys or not (observe/upstream.ts). */
admin.get("/admin/upstream", async (c) => {
  const { since, providers } = await directoryOf(c.env.DIRECTORY).upstream();
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return ok({ since: iso(since), providers: providers.map((p) => ({ provider: p.provider, counts: p.counts, lastAt: iso(p.lastAt) })) });
});

/** The last 15 minutes of the key in 5-second buckets (the dashboard's time series). */
admin.get("/admin/keys/:key/samples", async (c) => {
  const key = c.req.param("key");
  if (!(await known(c.env, key))) return unknownKey(key);
  return ok({ key, ...(await limiter(c.env, key).samples()) });
});

/** Prometheus text exposition; the guard above wants the admin token, as a bearer-token scrape sends it. */
admin.get("/admin/metrics", (c) => scrape(c.env));

admin.put("/admin/keys/:key/config", async (c) => {
  const key = c.req.param("key");
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return adminError("invalid_config", "body: must be a JSON object");
  }
  const parsed = parseOverride(body);
  if (!parsed.ok) return adminError("invalid_config", parsed.error);
  if (!(await known(c.env, key))) return unknownKey(key);
  const res = await limiter(c.env, key).configure(parsed.value);
  if (!res.ok) return adminError("invalid_config", fieldFirst(res.error));
  return ok(res.state);
});

admin.post("/admin/keys/:key/reset", async (c) => {
  const key = c.req.param("key");
  if (!(await known(c.env, key))) return unknownKey(key);
  return ok(await limiter(c.env, key).reset());
});

/** The usage ledger's minute rollups (routes/usage.ts). */
admin.get("/admin/usage", (c) => usage(c.env, (n) => c.req.query(n), Date.now()));

/** The response cache: entries, bytes, hits and misses, in all and per namespace. */
admin.get("/admin/cache", async (c) => ok(await cacheStats(c.env)));

/** Purges one namespace (`?namespace=`), or everything. */
admin.delete("/admin/cache", async (c) => {
  const res = await purgeCache(c.env, c.req.query("namespace") ?? null);
  return typeof res === "string" ? adminError("invalid_request", res) : ok(res);
});

admin.route("/admin/virtual-keys", virtualKeys);
admin.get("/admin/pools", async (c) => poolsView(c.env));

// Anything else under /admin is ours too: never let the proxy read "admin" as a provider.
admin.all("/admin/*", () => adminError("not_found", "no such admin route"));

const limiter = (env: Env, key: string) => env.LIMITER.get(env.LIMITER.idFromName(key));

/** Only keys the Directory has seen: looking must not create an empty limiter. */
async function known(env: Env, key: string): Promise<boolean> {
  return (await directoryOf(env.DIRECTORY).get(key)) !== null;
}

/** The limiter's state, or null when it fails or does not answer within STATE_TIMEOUT_MS. */
async function stateWithin(env: Env, key: string): Promise<LimiterSnapshot | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), STATE_TIMEOUT_MS)));
  try {
    return await Promise.race([limiter(env, key).state(), timeout]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A key the Directory does not list. Its limiter is not asked (looking must not create one): the
 * answer says why a key may be missing, and where its failures are counted instead.
 */
function unknownKey(key: string): Response {
  return adminError(
    "unknown_key",
    `no key ${JSON.stringify(key.slice(0, 300))} is listed: a key is kept and listed only from its first 2xx answer (for 30 days after its last request), so one whose every attempt failed (a bad key, a wrong baseUrl) never is. Those attempts are counted by provider: GET /admin/upstream.`,
  );
}

/** The Directory's row, with the limiter's current numbers when it answers in time. */
async function live(env: Env, e: DirectoryEntry, member: KeyListEntry["member"]): Promise<KeyListEntry> {
  const fallback: KeyListEntry = {
    key: e.key,
    provider: e.provider,
    model: e.model,
    limit: e.limit,
    inFlight: e.inFlight,
    queued: e.queued,
    lastSeen: new Date(e.lastSeen).toISOString(),
    phase: null,
    cooldownUntil: null,
    metrics: null,
    live: false,
    member,
    caller: null,
  };
  const s = await stateWithin(env, e.key);
  if (!s) return fallback;
  return {
    key: e.key,
    provider: e.provider,
    model: e.model,
    limit: s.concurrency.limit,
    inFlight: s.concurrency.inFlight,
    queued: s.concurrency.queued,
    lastSeen: s.lastSeen ?? fallback.lastSeen,
    phase: s.concurrency.phase,
    cooldownUntil: s.cooldownUntil,
    metrics: s.metrics,
    live: true,
    member,
    caller: s.callers[0]?.caller ?? null,
  };
}

/** The limiter's "minConcurrency must not exceed ..." as "minConcurrency: must not exceed ...". */
function fieldFirst(reason: string): string {
  const m = /^([A-Za-z]+) (.*)$/.exec(reason);
  return m ? `${m[1]}: ${m[2]}` : `config: ${reason}`;
}
