// GET /admin/usage: the ledger's minute rollups over a time range, by one dimension.
import type { Env } from "../env";
import { gatewayError } from "../proxy/errors";
import { DIMENSIONS, type Dimension, isEmptyLedger, type Mode, queryUsage } from "../usage/ledger";
import { MINUTE_MS } from "../usage/rollup";
import { flushMs } from "../usage/writer";

/** Rows one answer may hold; `truncated` says when more matched. */
export const USAGE_ROWS_MAX = 10_000;
const HOUR_MS = 3_600_000;

/** An instant as epoch ms or an ISO 8601 date; null when it is neither. */
function instant(raw: string | undefined, fallback: number): number | null {
  if (raw === undefined || raw === "") return fallback;
  const t = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  return Number.isFinite(t) ? t : null;
}

const nulled = (v: string | undefined) => (v === "" || v === undefined ? null : v);

/** `?since=&until=` (epoch ms or ISO 8601; default the last hour), `by=caller|virtualKey|model|key|pool|mode|tier` and `mode=sync|batch`. */
export async function usage(env: Env, query: (name: string) => string | undefined, now: number): Promise<Response> {
  const byRaw = query("by");
  if (byRaw !== undefined && !Object.hasOwn(DIMENSIONS, byRaw)) return gatewayError("invalid_request", `by must be one of ${Object.keys(DIMENSIONS).join(", ")}`);
  const mode = query("mode") ?? null;
  if (mode !== null && mode !== "sync" && mode !== "batch") return gatewayError("invalid_request", "mode must be sync or batch");
  const until = instant(query("until"), now);
  const since = until === null ? null : instant(query("since"), until - HOUR_MS);
  if (until === null || since === null) return gatewayError("invalid_request", "since and until must be epoch milliseconds or ISO 8601 dates");
  if (since >= until) return gatewayError("invalid_request", "since must be before until");
  if (!env.LEDGER) return gatewayError("config_error", "no LEDGER binding (D1): the usage ledger is not configured");
  const by = (byRaw as Dimension | undefined) ?? null;
  // Minute rows start on the minute: a range starting inside one includes it.
  const from = Math.floor(since / MINUTE_MS) * MINUTE_MS;
  let found;
  try {
    found = await queryUsage(env.LEDGER, from, until, by, USAGE_ROWS_MAX, mode as Mode | null);
  } catch (err) {
    if (!isEmptyLedger(err)) throw err;
    found = { rows: [], totals: null, groups: [] };
  }
  const rows = found.rows.slice(0, USAGE_ROWS_MAX).map(({ minute, dim, ...figures }) => ({
    minute: new Date(minute).toISOString(),
    ...(by ? { [by]: nulled(dim) } : {}),
    ...figures,
  }));
  const zero = { requests: 0, unknownUsage: 0, unpricedRequests: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, costUsd: 0 };
  const totals = Object.fromEntries(Object.entries(zero).map(([k, v]) => [k, (found.totals as Record<string, number | null> | null)?.[k] ?? v]));
  // With `by`: the range's total per value (a whole figure per model, caller, ...), beside its minute rows.
  const groups = by ? found.groups.map(({ dim, ...figures }) => ({ [by]: nulled(dim), ...figures })) : undefined;
  const body = {
    since: new Date(from).toISOString(), until: new Date(until).toISOString(), by, mode, rows, totals, ...(groups && { groups }),
    truncated: found.rows.length > USAGE_ROWS_MAX, writtenEveryMs: flushMs(env.USAGE_FLUSH_MS),
  };
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json", "cache-control": "no-store" } });
}
