// `ANY /:provider/*`: the request path as a short pipeline of named stages, each a module of its
// own. Each stage either answers (a Response) or hands the next what it found.
//
//   token or virtual key → settings → asked → caller → virtual key → body read (held as it arrives)
//     → label → batches → stored objects → pool route → budget → cache → cap → limiter and attempts (run)
import { DIALECTS } from "../providers/dialects";
import type { Context } from "hono";
import { Hono } from "hono/tiny";
import { batchStage } from "../batches/stage";
import { pricing } from "../budget/priceable";
import { budgetStage } from "../budget/stage";
import { worstCase } from "../budget/worst";
import { cacheStage } from "../cache/stage";
import type { Env } from "../env";
import { countUpstream } from "../directory/upstream";
import { gateStage } from "../keys/gate";
import { watchKey } from "../keys/lookup";
import type { KeyMeta } from "../limiter/types";
import { operationOf } from "../observe/genai";
import { type RequestSpan, requestSpan } from "../observe/spans";
import { logGatewayError } from "../observe/worker-log";
import { admit, type Found } from "../pools/admit";
import { cacheTenant, type KeyStage, poolRoute, virtualKeyStage, whoFor } from "../pools/stage";
import { type Asked, askedOf } from "../proxy/asked";
import { type Who, whoIsAsking } from "../proxy/caller";
import { gatewayError } from "../proxy/errors";
import { parseJson, upstreamHeaders } from "../proxy/forward";
import { readBody } from "../proxy/held";
import { keepLabel, labelStage } from "../proxy/labels";
import { LimiterClient } from "../proxy/limiter-client";
import { describe } from "../proxy/request";
import { run } from "../proxy/run";
import { type Settings, settingsOf } from "../proxy/settings";
import { storedStage } from "../stored/stage";
import { Meter, type UsageRecord } from "../usage/meter";
import { dearest, priceOf, tierPrice } from "../usage/prices";
import type { Dialect } from "../providers/dialect";
import { offered } from "../tiers/body";
import { chooseTier, type TierAsk, tierAsk } from "../tiers/choose";
import { planTier } from "../tiers/plan";

export const proxy = new Hono<{ Bindings: Env }>();

type Pooled = Extract<KeyStage, { kind: "pool" }>;
/** Who asks: the caller and lane its key's limiter files it under, its virtual key's pool, and the tier its headers ask for. */
type Caller = { who: Who; pooled: Pooled | null; ask: TierAsk };

proxy.all("/:provider/*", async (c) => {
  const req = c.req.raw;
  const start = Date.now();
  // The token (or a virtual key) first: a stranger learns nothing, not even which providers or variables exist.
  const door = await admit(c.env, req);
  if (door.kind === "refused") return door.res;
  const settings = settingsOf(c.env);
  if (settings instanceof Response) return settings;
  const asked = askedOf(req, settings, start);
  if (asked instanceof Response) return asked;
  const op = operationOf(asked.method, asked.rest);
  // Traces (OTEL_*): off, this one check; on, the request's span, which ends with its answer.
  if (!settings.trace) return serve(c, settings, asked, { op, start, found: door.found });
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  const span = requestSpan(settings.trace, req.headers, start, asked.provider.name, asked.method, op, waitUntil);
  if (!span) return serve(c, settings, asked, { op, start, found: door.found });
  try {
    return span.answer(await serve(c, settings, asked, { op, start, span, found: door.found }), waitUntil);
  } catch (err) {
    span.close(Date.now(), "internal_error");
    throw err;
  }
});

/** The request's GenAI operation (null: none) and arrival, its span when traced, and the virtual key that let it in. */
type Op = { op: string | null; start: number; span?: RequestSpan; found?: Found };

async function serve(c: Context<{ Bindings: Env }>, settings: Settings, asked: Asked, op: Op): Promise<Response> {
  const req = c.req.raw;
  const who = await whoIsAsking(req.headers, c.env.GATEWAY_TOKENS);
  if (typeof who === "string") return gatewayError("invalid_request", who);
  const ask = tierAsk(req.headers);
  if (typeof ask === "string") return gatewayError("invalid_request", ask);
  // A virtual key: its pool's members send it, under its name; an unknown one goes nowhere.
  const keyed = await virtualKeyStage(c.env, asked, settings.table, op.found);
  if (keyed.kind === "refused") return keyed.res;
  const caller = keyed.kind === "pool" ? { who: whoFor(keyed.vk, who), pooled: keyed, ask } : { who, pooled: null, ask };
  const held = await readBody(req, asked.hasBody, settings.gw);
  if (held instanceof Response) return held;
  try {
    return await send(c, settings, asked, caller, op, held.bytes);
  } finally {
    held.release();
  }
}

/** Keys the body and runs it: the body is held (and counted in the budget) until this returns. */
async function send(c: Context<{ Bindings: Env }>, s: Settings, a: Asked, { who, pooled, ask }: Caller, { op, start, span }: Op, bytes: Uint8Array): Promise<Response> {
  const req = c.req.raw;
  const read = await describe(a.provider, a.headers, a.incoming, a.rest, bytes, a.label);
  const { key, cost, stream, body, model, sent } = read;
  // A label is a limiter of its own: a credential may use so many (a virtual key none: pools/stage.ts).
  const labelled = await labelStage(c.env.DIRECTORY, a.provider.name, key.credentialHash, a.label, Date.now());
  if (labelled) return labelled;
  const dialect = DIALECTS[a.provider.dialect];
  // The tier it goes at: its body's field, else its header, its virtual key's, its lane's (TIERS).
  const chosen = chooseTier({ body: read.tier, header: ask.tier, key: pooled?.vk.tier, lane: who.priority, lanes: s.tiers });
  // Decided once (tiers/plan.ts), against every dialect that may serve it: a pool's members', else the route's.
  const planned = chosen ? planTier(chosen, ask.fallback, model, read.route, pooled ? pooled.pool.members.map((m) => DIALECTS[m.provider.dialect]) : [dialect]) : null;
  if (typeof planned === "string") return gatewayError("invalid_request", planned);
  const tier = planned?.plan;
  span?.described(model, key.key, who, pooled && { pool: pooled.pool.name, vk: pooled.vk.name });
  const meta = { key: key.key, provider: a.provider.name, model: key.model };
  const waitUntil = (p: Promise<unknown>) => c.executionCtx.waitUntil(p);
  const limiterFor = (m: KeyMeta) => new LimiterClient(c.env.LIMITER, m, { waitUntil, location: s.location });
  const headers = upstreamHeaders(req.headers);

  // What a virtual key made (batches, files, stored responses): only its own, on the member that holds them.
  const own = pooled && { env: c.env, vk: pooled.vk, pool: pooled.pool, provider: a.provider.name, flavour: a.provider.flavour, method: a.method, rest: a.rest, body: bytes, waitUntil };
  // Provider batches and files: their results metered as they pass.
  const batch = own ? await batchStage({ ...own, search: a.incoming.searchParams, headers: req.headers, prices: s.prices, here: `${a.incoming.origin}/${a.provider.name}` }) : null;
  if (batch instanceof Response) return batch;
  // Stored responses and files named by id in an inference body.
  const stored = own && !batch ? await storedStage(own) : null;
  if (stored instanceof Response) return stored;
  // A pool's members, each with its own URL, credential and limiter.
  const route = pooled
    ? await poolRoute({
        pool: batch?.pool ?? stored?.pool ?? pooled.pool, vk: pooled.vk, rest: a.rest, search: a.incoming.search, headers, body, outMs: s.gw.poolOutMs, limiterFor,
        // A request that may not fall back goes only to members that sell its tier.
        ...(tier?.fallback === "none" && { serves: (d: Dialect) => offered(d.tiers, tier.asked, model, tier.route) }),
      })
    : undefined;
  if (route instanceof Response) return route;
  // A virtual key with a budget reserves the most the request can cost (budget/worst.ts), at the
  // dearest tier it may be served at, before anything is sent; the meter settles it at the tier that served.
  const listed = pooled?.vk.budget ? priceOf(s.prices, a.provider.name, model) : null;
  const atTiers = listed ? (planned?.servedAt ?? ["standard"]).map((t) => ({ t, p: tierPrice(listed, t, dialect.tiers?.ratio[t]) })) : [];
  const noPrice = atTiers.find((x) => x.p === null)?.t ?? null;
  const price = listed && !noPrice ? dearest(atTiers.map((x) => x.p!)) : null;
  // Parsed again only for a budgeted key (null: not JSON).
  let json: unknown;
  const jsonOf = () => (json === undefined ? (json = parseJson(bytes)) : json);
  const unknownTier = read.unknownTier ?? noPrice;
  const budget = await budgetStage(c.env, pooled?.vk, {
    model, price, rest: a.rest,
    pricing: () => pricing({ flavour: a.provider.flavour, method: a.method, rest: a.rest, json: jsonOf(), model, ...(unknownTier !== null && { tier: { name: unknownTier, priced: false } }) }),
    worst: () => worstCase(jsonOf(), bytes.byteLength, price!, model),
  }, waitUntil);
  if (budget instanceof Response) return budget;
  const counted = span ? (r: UsageRecord, whole: boolean) => (budget?.counted(r, whole), span.usage(r)) : budget?.counted;
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
        statsMs: s.statsMs,
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
            charges: budget ?? undefined,
            operation: op ? { op, model, start } : undefined,
            trace: span,
            tier,
            limiterFor,
            upstream: (provider, status) => countUpstream(c.env.DIRECTORY, waitUntil, provider, status, s.statsMs),
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
  if (batch) res = await batch.finish(res, route?.served);
  if (stored) res = stored.finish(res, route?.served);
  // An answer proves the credential: only now is its label kept.
  if (a.label !== null && res.status >= 200 && res.status < 300) waitUntil(keepLabel(c.env.DIRECTORY, a.provider.name, key.credentialHash, a.label, Date.now()).catch(() => {}));
  return logGatewayError(c.env, key.key, res);
}
