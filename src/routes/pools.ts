// `GET /admin/pools`: each pool's members as their limiters see them. A member's key is found by
// its credential's hash among the keys the Directory lists; the key itself is never shown.
import { ConfigError } from "../config/env";
import { directoryOf } from "../directory/object";
import type { Env } from "../env";
import type { LimiterSnapshot } from "../limiter/types";
import { type Member, poolsOf } from "../pools/config";
import { memberHash } from "../pools/member";
import { providers } from "../providers/registry";
import { gatewayError } from "../proxy/errors";

const TIMEOUT_MS = 3_000;
const MINUTE_MS = 60_000;

export interface MemberRow {
  name: string;
  provider: string;
  /** The secret's name (never its value). */
  secret: string;
  /** Its limiter keys, one per model it has served. */
  keys: string[];
  state: "in" | "out";
  until: string | null;
  reason: string | null;
  limit: number;
  inFlight: number;
  queued: number;
  ratePerMin: number | null;
  served: number;
  /** Its part of the pool's answers in the last minute, 0 to 1. */
  share: number;
}

export async function poolsView(env: Env): Promise<Response> {
  let pools;
  try {
    pools = poolsOf(env.POOLS, providers(env.PROVIDERS), env);
  } catch (err) {
    if (err instanceof ConfigError) return gatewayError("config_error", err.message, { "cache-control": "no-store" });
    throw err;
  }
  // Each member's own keys, asked by its credential's hash: however many keys others have made, the list holds them all.
  const members = Object.values(pools).flatMap((p) => p.members);
  const creds = await Promise.all(members.map(async (m) => `${m.provider.name}:${await memberHash(m)}`));
  const keys = await directoryOf(env.DIRECTORY).keysOf(creds);
  const out = await Promise.all(
    Object.values(pools).map(async (pool) => {
      const rows = await Promise.all(pool.members.map(async (m) => memberRow(env, m, keys[`${m.provider.name}:${await memberHash(m)}`] ?? [])));
      const total = rows.reduce((s, r) => s + r.lastMinute, 0);
      const members = rows.map(({ lastMinute, ...r }) => ({ ...r, share: total > 0 ? Math.round((lastMinute / total) * 1000) / 1000 : 0 }));
      return { name: pool.name, provider: pool.provider, members };
    }),
  );
  return new Response(JSON.stringify({ pools: out }), { headers: { "content-type": "application/json", "cache-control": "no-store" } });
}

/** Every member's `provider:hash`, to its pool and member names (for the metrics' labels); {} when POOLS is unusable. */
export async function memberIndex(env: Env): Promise<Map<string, { pool: string; member: string }>> {
  const index = new Map<string, { pool: string; member: string }>();
  let pools;
  try {
    pools = poolsOf(env.POOLS, providers(env.PROVIDERS), env);
  } catch {
    return index;
  }
  for (const pool of Object.values(pools))
    for (const m of pool.members) {
      const hash = await memberHash(m);
      if (hash) index.set(`${m.provider.name}:${hash}`, { pool: pool.name, member: m.name });
    }
  return index;
}

async function memberRow(env: Env, m: Member, candidates: string[]): Promise<MemberRow & { lastMinute: number }> {
  const hash = await memberHash(m);
  const keys = hash ? candidates.filter((k) => k.endsWith(`:${hash}`)) : [];
  const row: MemberRow & { lastMinute: number } = {
    name: m.name, provider: m.provider.name, secret: m.secret, keys, state: "in", until: null, reason: null,
    limit: 0, inFlight: 0, queued: 0, ratePerMin: null, served: 0, share: 0, lastMinute: 0,
  };
  const states = await Promise.all(keys.map((k) => ask(env, k)));
  for (const s of states) {
    if (!s) continue;
    row.limit += s.state.concurrency.limit;
    row.inFlight += s.state.concurrency.inFlight;
    row.queued += s.state.concurrency.queued;
    row.served += s.state.metrics.completedRequests;
    if (s.state.ratePerMin) row.ratePerMin = (row.ratePerMin ?? 0) + s.state.ratePerMin;
    row.lastMinute += s.lastMinute;
    if (s.state.out && (row.until === null || s.state.out.until > row.until)) Object.assign(row, { state: "out", until: s.state.out.until, reason: s.state.out.reason });
  }
  return row;
}

/** One key's state and its answers in the last minute, or null when it does not answer in time. */
async function ask(env: Env, key: string): Promise<{ state: LimiterSnapshot; lastMinute: number } | null> {
  const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), TIMEOUT_MS)));
  try {
    const got = await Promise.race([Promise.all([stub.state(), stub.samples()]), late]);
    if (!got) return null;
    const [state, samples] = got;
    const since = samples.now - MINUTE_MS;
    const lastMinute = samples.points.filter((p) => p.t >= since).reduce((s, p) => s + p.answersPerSec * (samples.stepMs / 1_000), 0);
    return { state, lastMinute: Math.round(lastMinute) };
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
