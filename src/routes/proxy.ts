import { type Context, Hono } from "hono";
import { gatewayTokenOk } from "../auth";
import { type CacheConfig, cacheConfigOf } from "../cache/config";
import { cacheStage } from "../cache/stage";
import { checkLimiterEnv, ConfigError, gatewayConfigOf, type Location, limiterLocation } from "../config/env";
import type { GatewayConfig } from "../config/limits";
import type { Env } from "../env";
import { logGatewayError } from "../observe/worker-log";
import { providers } from "../providers/registry";
import { LABEL } from "../providers/key";
import { splitPath, upstreamUrl } from "../providers/url";
import type { Provider } from "../providers/table";
import { checkWeights, type Who, whoIsAsking } from "../proxy/caller";
import { expectedBytes, hold } from "../proxy/held";
import { gatewayError } from "../proxy/errors";
import { readBounded, upstreamHeaders } from "../proxy/forward";
import { LimiterClient } from "../proxy/limiter-client";
import { describe } from "../proxy/request";
import { run } from "../proxy/run";
import { Meter } from "../usage/meter";
import { type PriceTable, priceOf, priceTable } from "../usage/prices";
import { budgetStage, estimateUsd } from "../budget/stage";
import { gateStage } from "../keys/gate";
import { watchKey } from "../keys/lookup";
import type { KeyMeta } from "../limiter/types";
import { cacheTenant, type KeyStage, poolRoute, virtualKeyStage, whoFor } from "../pools/stage";

export const proxy = new Hono<{ Bindings: Env }>();

/** A caller may lower, never raise, a limit with a header; garbage is refused, not guessed at. */
function lowered(raw: string | undefined, configured: number, name: string): number | string {
  if (raw === undefined) return configured;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < 1) return `${name} must be a positive integer`;
  return Math.min(n, configured);
}

proxy.all("/:provider/*", async (c) => {
  // The token first: a stranger learns nothing, not even which providers or variables exist.
  if (!(await gatewayTokenOk(c.env.GATEWAY_TOKENS, c.req.header("x-slotgate-token") ?? null)))
    return gatewayError("unauthorized", "x-slotgate-token is missing or not one of GATEWAY_TOKENS");
  let table, gw, location, cache, prices;
  try {
    table = providers(c.env.PROVIDERS);
    prices = priceTable(c.env.PRICES);
    gw = gatewayConfigOf(c.env);
    cache = cacheConfigOf(c.env);
    checkLimiterEnv(c.env);
    location = limiterLocation(c.env);
    checkWeights(c.env.PRIORITY_WEIGHTS);
  } catch (err) {
    if (err instanceof ConfigError) return gatewayError("config_error", err.message);
    throw err;
  }
  const incoming = new URL(c.req.url);
  const { name, rest } = splitPath(incoming.pathname);
  const provider = Object.hasOwn(table, name) ? table[name] : undefined;
  if (!provider) return gatewayError("unknown_provider", `no provider named ${JSON.stringify(name.slice(0, 64))}`);

  const url = upstreamUrl(provider, rest, incoming.search);
  if (!url) return gatewayError("invalid_request", "the path may not leave the provider's base URL");
  const label = c.req.header("x-slotgate-limit-key") ?? null;
  if (label !== null && !LABEL.test(label)) return gatewayError("invalid_request", "x-slotgate-limit-key must be 1-128 of A-Z a-z 0-9 . _ @ + / -");
  const maxAttempts = lowered(c.req.header("x-slotgate-max-attempts"), gw.maxAttempts, "x-slotgate-max-attempts");
  const deadlineMs = lowered(c.req.header("x-slotgate-deadline-ms"), gw.deadlineMs, "x-slotgate-deadline-ms");
  if (typeof maxAttempts === "string") return gatewayError("invalid_request", maxAttempts);
  if (typeof deadlineMs === "string") return gatewayError("invalid_request", deadlineMs);
  const asked = await whoIsAsking(c.req.raw.headers, c.env.GATEWAY_TOKENS);
  if (typeof asked === "string") return gatewayError("invalid_request", asked);
  // A virtual key: its pool's members send it, under its name; an unknown one goes nowhere.
  const keyed = await virtualKeyStage(c.env, { method: c.req.method, headers: c.req.raw.headers, url: incoming, rest, label }, provider, table);
  if (keyed.kind === "refused") return keyed.res;
  const pooled = keyed.kind === "pool" ? keyed : null;
  const who = pooled ? whoFor(pooled.vk, asked) : asked;

  const start = Date.now();
  const hasBody = c.req.method !== "GET" && c.req.method !== "HEAD";
  const letGo = hold(hasBody ? expectedBytes(c.req.raw.headers, gw.maxBodyBytes) : 0, gw.bodyBudgetBytes);
  if (!letGo) {
    // Read to the end and dropped as it comes (nothing held), so the caller gets this answer, not a broken pipe.
    await c.req.raw.body?.pipeTo(new WritableStream()).catch(() => {});
    return gatewayError("overloaded", "this gateway instance holds too many queued request bodies (BODY_BUDGET_BYTES); try again shortly", { "retry-after": "1" });
  }
  try {
    return await send(c, { provider, gw, cache, prices, location, incoming, rest, url, label, maxAttempts, deadlineMs, who, start, hasBody, pooled });
  } finally {
    letGo();
  }
});

type Resolved = {
  provider: Provider; gw: GatewayConfig; cache: CacheConfig; prices: PriceTable; location: Location | undefined; incoming: URL; rest: string; url: URL; label: string | null;
  maxAttempts: number; deadlineMs: number; who: Who; start: number; hasBody: boolean; pooled: Pooled | null;
};
type Pooled = Extract<KeyStage, { kind: "pool" }>;

/** Reads the body, keys it and runs it: the body is held (and counted in the budget) until this returns. */
async function send(c: Context<{ Bindings: Env }>, r: Resolved): Promise<Response> {
  const { provider, gw, cache, prices, location, incoming, rest, url, label, maxAttempts, deadlineMs, who, start, hasBody, pooled } = r;
  const bytes = hasBody ? await readBounded(c.req.raw, gw.maxBodyBytes) : new Uint8Array(0);
  if (!bytes) return gatewayError("body_too_large", `the body is over MAX_BODY_BYTES (${gw.maxBodyBytes})`);
  const { key, cost, stream, body, model, sent } = await describe(provider, c.req.raw.headers, incoming, rest, bytes, label);
  const meta = { key: key.key, provider: provider.name, model: key.model };
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  const deadline = start + deadlineMs;
  const limiterFor = (m: KeyMeta) => new LimiterClient(c.env.LIMITER, m, waitUntil, Date.now, undefined, location);

  const headers = upstreamHeaders(c.req.raw.headers);
  // A pool's members, each with its own URL, credential and limiter.
  const route = pooled
    ? await poolRoute({ pool: pooled.pool, vk: pooled.vk, rest, search: incoming.search, headers, body, outMs: gw.poolOutMs, limiterFor })
    : undefined;
  if (route instanceof Response) return route;
  // A virtual key with a budget reserves the estimate before anything is sent; the meter settles it.
  const price = pooled?.vk.budget ? priceOf(prices, provider.name, model) : null;
  const budget = await budgetStage(c.env, pooled?.vk, { model, price, estimate: () => estimateUsd(bytes.byteLength, cost, price) }, waitUntil);
  if (budget instanceof Response) return budget;
  const meter = new Meter(provider.name, model, prices, sent.strip, budget?.counted);
  // While it waits, a pooled request hears of its key's revocation.
  const watch = pooled ? watchKey(c.env, pooled.ref) : null;

  let res: Response;
  try {
    // Before the limiter: a stored answer takes no slot and no quota.
    res = await cacheStage(
      {
        bindings: { bucket: c.env.CACHE_BUCKET, shards: c.env.CACHE_SHARD },
        config: cache,
        method: c.req.method,
        headers: c.req.raw.headers,
        provider: provider.name,
        flavour: provider.flavour,
        rest,
        search: incoming.search,
        // A virtual key reads its own answers (its pool's where it opts in); anyone else only the same credential's.
        tenant: pooled ? cacheTenant(pooled.vk, pooled.pool) : key.credentialHash,
        body: bytes,
        limitKey: key.key,
        deadline,
        bodyBudgetBytes: gw.bodyBudgetBytes,
        now: Date.now,
        waitUntil,
      },
      () =>
        gateStage({ env: c.env, vk: pooled?.vk, deadline, signal: watch ? AbortSignal.any([c.req.raw.signal, watch.revoked]) : c.req.raw.signal, waitUntil, now: Date.now }, () => run(
          {
            url,
            method: c.req.method,
            headers,
            body: hasBody ? sent.bytes : null,
            key: meta,
            who,
            cost,
            stream,
            deadline,
            maxAttempts,
            gateway: gw,
            signal: c.req.raw.signal,
            waitUntil,
            route,
            stop: watch?.revoked,
            tags: { caller: who.caller, virtualKey: pooled?.vk.name, pool: pooled?.pool.name },
            meter,
          },
          // A pooled request's limiters are its members': no client for the virtual key's own key.
          route ? null : limiterFor(meta),
          { fetch: (input, init) => fetch(input, init), now: Date.now, random: Math.random },
        )),
    );
  } finally {
    watch?.stop();
    budget?.after(meter.used);
  }
  // Stopped while waiting: refused. An answer that came in the meantime is the caller's.
  if (watch?.revoked.aborted && res.status === 499) return gatewayError("unauthorized", "this virtual key was revoked");
  logGatewayError(c.env, key.key, res);
  return res;
}
