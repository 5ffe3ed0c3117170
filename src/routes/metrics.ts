import { cacheStats } from "../cache/admin";
import type { CacheStats } from "../cache/stats";
import { directoryOf, RECENT_MAX } from "../directory/object";
import type { Env } from "../env";
import type { KeyMetricsReport } from "../limiter/telemetry";
import { CONTENT_TYPE, type KeySeries, render } from "../observe/prometheus";
import { memberIndex } from "./pools";

/**
 * The label bound: at most this many keys (the most recently seen) have series in a scrape; the
 * rest are counted in `slotgate_keys_omitted`. Each key has a fixed number of series, so a scrape
 * holds at most METRICS_KEYS_MAX x (series per key) + 11 series (5 gateway, 6 cache) + 5 per configured
 * provider that has had an attempt (slotgate_provider_attempts_total), whatever callers send.
 */
export const METRICS_KEYS_MAX = RECENT_MAX;

/** A limiter that has not answered by then is counted in `slotgate_keys_unanswered` and left out. */
export const GATHER_TIMEOUT_MS = 5_000;

/**
 * `GET /admin/metrics`: the Directory's newest keys, each limiter asked for the counters and
 * gauges it already holds (no history, no samples), all at once under one deadline. Nothing here
 * touches the proxied request path: limiters count as they settle, a scrape only reads.
 */
export async function scrape(env: Env, now: () => number = Date.now): Promise<Response> {
  const started = now();
  const { entries, total } = await directoryOf(env.DIRECTORY).recent(METRICS_KEYS_MAX);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => (timer = setTimeout(() => r(null), GATHER_TIMEOUT_MS)));
  const ask = async (key: string): Promise<KeyMetricsReport | null> => {
    try {
      const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
      return (await Promise.race([stub.metrics(), late])) as KeyMetricsReport | null;
    } catch {
      return null;
    }
  };
  const cache = Promise.race([cacheStats(env), late]).catch(() => null) as Promise<CacheStats | null>;
  const upstream = Promise.race([directoryOf(env.DIRECTORY).upstream(), late]).catch(() => null);
  const [answers, cacheNow, members, counted] = await Promise.all([Promise.all(entries.map((e) => ask(e.key))), cache, memberIndex(env), upstream]);
  clearTimeout(timer);
  const keys: KeySeries[] = [];
  answers.forEach((a, i) => {
    const e = entries[i]!;
    const pool = members.get(`${e.provider}:${e.key.slice(e.key.lastIndexOf(":") + 1)}`);
    if (a) keys.push({ ...a, key: e.key, provider: e.provider, model: e.model, lastSeen: a.lastSeen ?? e.lastSeen, ...(pool && { pool }) });
  });
  const body = render(keys, {
    known: total,
    omitted: Math.max(0, total - entries.length),
    unanswered: entries.length - keys.length,
    durationSeconds: (now() - started) / 1_000,
    cache: cacheNow,
    upstream: counted?.providers ?? null,
  });
  return new Response(body, { headers: { "content-type": CONTENT_TYPE, "cache-control": "no-store" } });
}
