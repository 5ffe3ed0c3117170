// Minute rollups of usage records: what a key's limiter writes to the ledger from the records its
// outbox holds. Pure.
import type { UsageRecord } from "./types";

/** One ledger row: a minute of one key, caller, virtual key, pool, model and tier ("" where there is none). */
export interface Row {
  /** Epoch ms of the minute's start. */
  minute: number;
  key: string;
  caller: string;
  virtualKey: string;
  pool: string;
  model: string;
  /** The service tier that served (the sync table's; a provider batch's rows are at batch prices whatever it says). */
  tier: string;
  requests: number;
  /** Answers that carried no usage. */
  unknown: number;
  /** Answers with usage but no price for their model. */
  unpriced: number;
  input: number;
  output: number;
  cached: number;
  cacheWrite: number;
  costUsd: number;
}

/** One answer's record as a limiter keeps it: under its key, made at `at` (epoch ms). */
export interface Dated {
  key: string;
  at: number;
  record: UsageRecord;
}

export const MINUTE_MS = 60_000;

const DIMS = ["minute", "key", "caller", "virtualKey", "pool", "model", "tier"] as const;
const SUMS = ["requests", "unknown", "unpriced", "input", "output", "cached", "cacheWrite", "costUsd"] as const;

const rowId = (r: Pick<Row, (typeof DIMS)[number]>) => DIMS.map((d) => r[d]).join("\n");

/** One answer as a row of its own. */
export function rowOf({ key, at, record: r }: Dated): Row {
  const t = r.tokens;
  return {
    minute: Math.floor(at / MINUTE_MS) * MINUTE_MS, key, caller: r.caller ?? "", virtualKey: r.virtualKey ?? "", pool: r.pool ?? "", model: r.model, tier: r.tier ?? "",
    requests: 1, unknown: t ? 0 : 1, unpriced: t && r.costUsd === null ? 1 : 0,
    input: t?.input ?? 0, output: t?.output ?? 0, cached: t?.cached ?? 0, cacheWrite: t?.cacheWrite ?? 0, costUsd: r.costUsd ?? 0,
  };
}

/** The records summed into one row per minute and dimensions, in the order each row first appears. */
export function rollUp(records: Iterable<Dated>): Row[] {
  const rows = new Map<string, Row>();
  for (const d of records) {
    const r = rowOf(d);
    const id = rowId(r);
    const had = rows.get(id);
    if (!had) rows.set(id, r);
    else for (const s of SUMS) had[s] += r[s];
  }
  return [...rows.values()];
}
