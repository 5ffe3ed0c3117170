// What one life of a key's object leaves the next: the state rows a save writes (LimiterStore keeps
// them) and a restart reads back, and the leases it restores. Leases outlive the object, since their
// Workers may still be streaming and will renew and release them; but the restart may have taken
// those Workers too (a deploy), so a restored lease only lives until its holder's next renewal
// would have come, not a whole TTL.
import { type LimiterCore, renewEvery } from "./core";
import type { Persisted } from "./state";
import type { LeaseRow } from "./store";
import type { Mark } from "./tickets/mark";
import type { KeyMeta } from "./types";

/** A restored lease lives one renewal interval plus this, unless its Worker renews it. */
export const RESTORE_MARGIN_MS = 5_000;

/** The state rows, read (absent: a key never kept, or a row an older release did not write). */
export interface LastLife {
  /** Everything learned (the core's row, in the lead's format). */
  core?: Persisted;
  meta: KeyMeta | null;
  lastSeen: number | null;
  /** The last life's first ticket epoch (tickets/epoch.ts). */
  epoch: number | null;
  /** The counters and the sample ring, as written (Telemetry reads them leniently). */
  counters?: unknown;
  samples?: unknown;
  /** The ledger's seq when the counters were written: records after it are not in them. */
  counted?: number;
  /** Until when tickets may have been out, and how many (tickets/mark.ts). */
  tickets?: Mark;
}

/** What a save writes, from which parts. */
export type ThisLife = Required<Omit<LastLife, "epoch" | "tickets">>;

/**
 * The rows a save writes, in this order: everything learned (the core's row, in the lead's format),
 * the counters and the sample ring in rows of their own, the ledger's seq the counters include
 * (usage.ts, recount), and who the key is and when it was last asked, once it has them. Each is
 * JSON (a number as `String(n)` writes it reads back the same).
 */
const ROWS = ["core", "counters", "samples", "counted", "meta", "lastSeen"] as const;

export function lastLife(rows: Map<string, string>): LastLife {
  const read = <T>(k: string) => (rows.has(k) ? (JSON.parse(rows.get(k)!) as T) : undefined);
  return {
    core: read<Persisted>("core"),
    meta: read<KeyMeta>("meta") ?? null,
    lastSeen: read<number>("lastSeen") ?? null,
    epoch: read<number>("epoch") ?? null,
    counters: read("counters"),
    samples: read("samples"),
    counted: read<number>("counted"),
    tickets: read<Mark>("tickets"),
  };
}

/** The state rows a save writes (ROWS). */
export function stateRows(s: ThisLife): [string, string][] {
  return ROWS.filter((k) => s[k] !== null).map((k) => [k, JSON.stringify(s[k])]);
}

/** The last life's leases, each living at most until its holder's next renewal would have come. */
export function restoreLeases(core: LimiterCore, leases: LeaseRow[], now: number): void {
  const grace = renewEvery(core.config.leaseTtlMs) + RESTORE_MARGIN_MS;
  for (const l of leases) core.restoreLease(l.id, l.cost, Math.min(l.expires, now + grace), now, l.unused !== false);
}
