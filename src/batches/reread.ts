// A batch's state and results read by the gateway itself, from the pool member that holds the
// batch: how a budgeted key's batch is charged what its lines cost when its holder never reads
// them whole (or reads only some, or in pieces). Runs in the key's OwnedObjects, from its alarm.
import type { Env } from "../env";
import { poolsOf } from "../pools/config";
import { memberHash, memberRequest } from "../pools/member";
import type { BatchRoutes } from "../providers/flavour";
import { providers } from "../providers/registry";
import { FLAVOURS } from "../providers/table";
import { priceTable } from "../usage/prices";
import { type BatchFacts, batchRoutes, factsOf, readPath } from "./ops";
import { type Metered, pricedLines } from "./price";
import { tapResults } from "./tap";

/** Where a batch is and whose it is: the key's pool and the member that holds it, the route's provider, the key's name. */
export interface Holder {
  pool: string;
  member: string;
  provider: string;
  vk: string;
}

/** A read that takes longer than this is given up, and tried again at the next alarm. */
const READ_TIMEOUT_MS = 120_000;

/** The member's answer to a GET of `rest` (a read path of the provider's batch routes), or null: the member is gone from POOLS, or refused it. */
async function ask(env: Env, h: Holder, rest: (read: BatchRoutes["read"]) => string | null) {
  const table = providers(env.PROVIDERS);
  const pool = poolsOf(env.POOLS, table, env)[h.pool];
  const member = pool?.members.find((m) => m.name === h.member);
  const routes = table[h.provider] && batchRoutes(table[h.provider]!.flavour);
  const path = routes && rest(routes.read);
  if (!member || !path) return null;
  // The headers every request of the member's family carries (Anthropic's API version).
  const req = await memberRequest(member, { rest: path, search: "", headers: new Headers(FLAVOURS[member.provider.flavour].fixed), json: null, family: member.provider.flavour });
  if (!req) return null;
  const headers = req.headers;
  await req.authorizer?.authorize("GET", req.url, headers, null);
  const res = await fetch(req.url, { headers, signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  if (res.ok) return { res, member };
  await res.body?.cancel();
  return null;
}

/** The batch as its provider shows it now; null when it cannot be read. */
export async function batchNow(env: Env, h: Holder, id: string): Promise<BatchFacts | null> {
  const got = await ask(env, h, (read) => readPath(read.batch, { id }));
  return got ? factsOf(await got.res.json().catch(() => null)) : null;
}

/**
 * Reads an ended batch's results whole, handing each group of lines to `each` priced; true once
 * every line has been read (a batch with no output has none), false when they could not be.
 */
export async function readResults(env: Env, h: Holder, facts: BatchFacts, each: (lines: Metered[]) => Promise<unknown>): Promise<boolean> {
  if (!facts.ended) return false;
  const got = await ask(env, h, (read) => readPath(read.results, { id: facts.id, output: facts.output }));
  if (!got) return facts.lines === 0;
  const whose = { provider: h.provider, vk: h.vk, pool: h.pool, memberHash: await memberHash(got.member) };
  const prices = priceTable(env.PRICES);
  let chain: Promise<unknown> = Promise.resolve();
  let whole = false;
  try {
    const body = got.res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    await tapResults(body, (lines) => (chain = chain.then(() => each(pricedLines(lines, prices, whose)))), (w) => (whole = w)).pipeTo(new WritableStream());
    await chain;
  } catch {
    return false;
  }
  return whole;
}
