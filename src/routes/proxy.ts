// `ANY /:provider/*`: the request path as a short pipeline of named stages, each a module of its
// own. Each stage either answers (a Response) or hands the next what it found.
//
//   token → settings → asked → caller → virtual key → body held → body read
//     → batches → pool route → budget → cache → cap → limiter and attempts (run)
import { DIALECTS } from "../providers/dialects";
import type { Context } from "hono";
import { Hono } from "hono/tiny";
import { gatewayTokenOk } from "../auth";
import { batchStage } from "../batches/stage";
import { budgetStage, estimateUsd } from "../budget/stage";
import { cacheStage } from "../cache/stage";
import type { Env } from "../env";
import { gateStage } from "../keys/gate";
import { watchKey } from "../keys/lookup";
import type { KeyMeta } from "../limiter/types";
import { operationOf } from "../observe/genai";
import { type RequestSpan, requestSpan } from "../observe/spans";
import { logGatewayError } from "../observe/worker-log";
import { cacheTenant, type KeyStage, poolRoute, virtualKeyStage, whoFor } from "../pools/stage";
import { type Asked, askedOf } from "../proxy/asked";
import { type Who, whoIsAsking } from "../proxy/caller";
import { gatewayError } from "../proxy/errors";
import { upstreamHeaders } from "../proxy/forward";
import { holdBody } from "../proxy/held";
import { LimiterClient } from "../proxy/limiter-client";
import { readRequest } from "../proxy/request";
import { run } from "../proxy/run";
import { type Settings, settingsOf } from "../proxy/settings";
import { Meter, type UsageRecord } from "../usage/meter";
import { type Price, priceOf, tierPrice } from "../usage/prices";
import type { Dialect } from "../providers/dialect";
import { chooseTier, type TierAsk, tierAsk } from "../tiers/choose";
import { tierAt, type TierPlan } from "../tiers/plan";

export const proxy = new Hono<{ Bindings: Env }>();

type Pooled = Extract<KeyStage, { kind: "pool" }>;
/** Who asks: the caller and lane its key's limiter files it under, its virtual key's pool, and the tier its headers ask for. */
type Caller = { who: Who; pooled: Pooled | null; ask: TierAsk };

proxy.all("/:provider/*", async (c) => {
  const req = c.req.raw;
  const start = Date.now();
  // The token first: a stranger learns nothing, not even which providers or variables exist.
  if (!(await gatewayTokenOk(c.env.GATEWAY_TOKENS, req.headers.get("x-slotgate-token"))))
    return gatewayError("unauthorized", "x-slotgate-token is missing or not one of GATEWAY_TOKENS");
  const settings = settingsOf(c.env);
  if (settings instanceof Response) return settings;
  const asked = askedOf(req, settings, start);
  if (asked instanceof Response) return asked;
  const op = operationOf(asked.method, asked.rest);
  // Traces (OTEL_*): off, this one check; on, the request's span, which ends with its answer.
  if (!settings.trace) return serve(c, settings, asked, { op, start });
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  const span = requestSpan(settings.trace, req.headers, start, asked.provider.name, asked.method, op, waitUntil);
  if (!span) return serve(c, settings, asked, { op, start });
  try {
    return span.answer(await serve(c, settings, asked, { op, start, span }), waitUntil);
  } catch (err) {
    span.close(Date.now(), "internal_error");
    throw err;
  }
});

/** The request's GenAI operation (null: none) and arrival, and its span when traced. */
type Op = { op: string | null; start: number; span?: RequestSpan };

async function serve(c: Context<{ Bindings: Env }>, settings: Settings, asked: Asked, op: Op): Promise<Response> {
  const req = c.req.raw;
  const who = await whoIsAsking(req.headers, c.env.GATEWAY_TOKENS);
  if (typeof who === "string") return gatewayError("invalid_request", who);
  const ask = tierAsk(req.headers);
  if (typeof ask === "string") return gatewayError("invalid_request", ask);
  // A virtual key: its pool's members send it, under its name; an unknown one goes nowhere.
  const keyed = await virtualKeyStage(c.env, asked, settings.table);
  if (keyed.kind === "refused") return keyed.res;
  const caller = keyed.kind === "pool" ? { who: whoFor(keyed.vk, who), pooled: keyed, ask } : { who, pooled: null, ask };
  const letGo = await holdBody(req, asked.hasBody, settings.gw);
  if (letGo instanceof Response) return letGo;
  try {
    return await send(c, settings, asked, caller, op);
  } finally {
    letGo();
  }
}

/** Reads the body, keys it and runs it: the body is held (and counted in the budget) until this returns. */
async function send(c: Context<{ Bindings: Env }>, s: Settings, a: Asked, { who, pooled, ask }: Caller, { op, start, span }: Op): Promise<Response> {
  const req = c.req.raw;
  const read = await readRequest(req, a, s.gw.maxBodyBytes);
  if (read instanceof Response) return read;
  const { bytes, key, cost, stream, body, model, sent } = read;
  const dialect = DIALECTS[a.provider.dialect];
  // The tier it goes at: its body's field, else its header, its virtual key's, its lane's (TIERS).
  const chosen = chooseTier({ body: read.tier, header: ask.tier, key: pooled?.vk.tier, lane: who.priority, lanes: s.tiers });
  const tier = chosen ? { asked: chosen.tier, by: chosen.by, fallback: ask.fallback, model, route: read.route } : undefined;
  span?.described(model, key.key, who, pooled && { pool: pooled.pool.name, vk: pooled.vk.name });
  const meta = { key: key.key, provider: a.provider.name, model: key.model };
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  const limiterFor = (m: KeyMeta) => new LimiterClient(c.env.LIMITER, m, { waitUntil, location: s.location });
  const headers = upstreamHeaders(req.headers);

  // Provider batches and files: a key kept to what it made, sent to the member that holds it, its results metered.
  const batch = pooled
    ? await batchStage({
        env: c.env, vk: pooled.vk, pool: pooled.pool, provider: a.provider.name, flavour: a.provider.flavour, method: a.method, rest: a.rest,
        search: a.incoming.searchParams, body: bytes, headers: req.headers, prices: s.prices, here: `${a.incoming.origin}/${a.provider.name}`, waitUntil,
      })
    : null;
  if (batch instanceof Response) return batch;
  // A pool's members, each with its own URL, credential and limiter.
  const route = pooled
    ? await poolRoute({ pool: batch?.pool ?? pooled.pool, vk: pooled.vk, rest: a.rest, search: a.incoming.search, headers, body, outMs: s.gw.poolOutMs, limiterFor })
    : undefined;
  if (route instanceof Response) return route;
  // A virtual key with a budget reserves the estimate, at the price of the tier asked for, before
  // anything is sent; the meter settles it at the tier that served.
  const price = pooled?.vk.budget ? askedPrice(s, a.provider.name, model, dialect, tier) : null;
  const budget = await budgetStage(c.env, pooled?.vk, { model, price, estimate: () => estimateUsd(bytes.byteLength, cost, price) }, waitUntil);
  if (budget instanceof Response) return budget;
  const counted = span ? (r: UsageRecord) => (budget?.counted(r), span.usage(r)) : budget?.counted;
  const meter = new Meter({
    provider: a.provider.name, model, prices: s.prices, strip: sent.strip, usageAt: dialect.usage.at, counted, op, start, facts: span?.facts, tiers: dialect.tiers,
  });
  // While it waits, a pooled request hears of its key's revocation.
  const watch = pooled ? watchKey(c.env, pooled.ref) : null;
  const waiting = watch ? AbortSignal.any([req.signal, watch.revoked]) : req.signal;

  let res: Response;
  try {
    // Before the limiter: a stored answer takes no slot and no quota.
    res = await cacheStage(
      {
        bindings: { bucket: c.env.CACHE_BUCKET, shards: c.env.CACHE_SHARD },
        config: s.cache,
        method: a.method,
        headers: req.headers,
        provider: a.provider.name,
        flavour: a.provider.flavour,
        rest: a.rest,
        search: a.incoming.search,
        // A virtual key reads its own answers (its pool's where it opts in); anyone else only the same credential's.
        tenant: pooled ? cacheTenant(pooled.vk, pooled.pool) : key.credentialHash,
        body: bytes,
        limitKey: key.key,
        deadline: a.deadline,
        now: Date.now,
        waitUntil,
        bodyBudgetBytes: s.gw.bodyBudgetBytes,
      },
      // A capped virtual key holds one of its slots from here until its answer has ended.
      () => gateStage({ env: c.env, vk: pooled?.vk, deadline: a.deadline, signal: waiting, waitUntil, now: Date.now }, () =>
        run(
          {
            url: a.url,
            method: a.method,
            headers,
            body: a.hasBody ? sent.bytes : null,
            key: meta,
            dialect,
            who,
            cost,
            stream,
            deadline: a.deadline,
            maxAttempts: a.maxAttempts,
            gateway: s.gw,
            signal: req.signal,
            waitUntil,
            route,
            stop: watch?.revoked,
            tags: { caller: who.caller, virtualKey: pooled?.vk.name, pool: pooled?.pool.name },
            // A batch's own calls are no answers: its results are metered as they are read (src/batches/).
            meter: batch ? undefined : meter,
            operation: op ? { op, model, start } : undefined,
            trace: span,
            tier,
            limiterFor,
          },
          // A pooled request's limiters are its members': no client for the virtual key's own key.
          route ? null : limiterFor(meta),
          { fetch: (input, init) => fetch(input, init), now: Date.now, random: Math.random },
        ),
      ),
    );
  } finally {
    watch?.stop();
    budget?.after(meter.used);
  }
  // Stopped while waiting: refused. An answer that came in the meantime is the caller's.
  if (watch?.revoked.aborted && res.status === 499) return gatewayError("unauthorized", "this virtual key was revoked");
  if (batch) res = await batch.finish(res);
  logGatewayError(c.env, key.key, res);
  return res;
}

/** The price a request is reserved at: its model's, at the tier it is sent at first (null: either has none). */
function askedPrice(s: Settings, provider: string, model: string, d: Dialect, tier: TierPlan | undefined): Price | null {
  const listed = priceOf(s.prices, provider, model);
  if (!listed || !tier) return listed;
  const at = tierAt(tier, d, tier.asked);
  return tierPrice(listed, at, d.tiers?.ratio[at]);
}
