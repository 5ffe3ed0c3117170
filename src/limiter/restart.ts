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

export function lastLife(rows: Map<string, string>): LastLife {
  const json = (k: string) => (rows.has(k) ? (JSON.parse(rows.get(k)!) as unknown) : undefined);
  const num = (k: string) => (rows.has(k) ? Number(rows.get(k)) : undefined);
  const core = rows.get("core");
  return {
    core: core ? (JSON.parse(core) as Persisted) : undefined,
    meta: (json("meta") as KeyMeta | undefined) ?? null,
    lastSeen: num("lastSeen") ?? null,
    epoch: num("epoch") ?? null,
    counters: json("counters"),
    samples: json("samples"),
    counted: num("counted"),
    tickets: json("tickets") as Mark | undefined,
  };
}

/** The state rows a save writes: everything learned, the counters and samples, and who the key is. */
export function stateRows(s: ThisLife): [string, string][] {
  const rows: [string, string][] = [
    ["core", JSON.stringify(s.core)],
    // Counters and the sample ring have rows of their own: the core's row stays the lead's format.
    ["counters", JSON.stringify(s.counters)],
    ["samples", JSON.stringify(s.samples)],
    // The counters above include every usage record kept up to here (usage.ts, recount).
    ["counted", String(s.counted)],
  ];
  if (s.meta) rows.push(["meta", JSON.stringify(s.meta)]);
  if (s.lastSeen !== null) rows.push(["lastSeen", String(s.lastSeen)]);
  return rows;
}

/** The last life's leases, each living at most until its holder's next renewal would have come. */
export function restoreLeases(core: LimiterCore, leases: LeaseRow[], now: number): void {
  const grace = renewEvery(core.config.leaseTtlMs) + RESTORE_MARGIN_MS;
  for (const l of leases) core.restoreLease(l.id, l.cost, Math.min(l.expires, now + grace), now, l.unused !== false);
}
