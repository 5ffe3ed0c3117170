// A key's object's upkeep: when the key becomes kept (its proof, or an operator's change), what its
// alarm does (sweeps leases whose Worker never came back, writes the usage outbox to the ledger when
// due) and when it is set next, and the state rows a save writes (restart.ts). Time comes from `now`.
import type { LedgerWriter } from "../usage/writer";
import type { LimiterCore } from "./core";
import type { LimiterDriver } from "./driver";
import type { Listing } from "./listing";
import { stateRows } from "./restart";
import type { LimiterStore } from "./store";
import type { Telemetry } from "./telemetry";

export interface UpkeepParts {
  core: LimiterCore;
  store: Pick<LimiterStore, "prove" | "save" | "saveRow" | "journal" | "fired" | "arm">;
  driver: Pick<LimiterDriver, "pump">;
  telemetry: Pick<Telemetry, "expired" | "counters" | "ring">;
  listing: Pick<Listing, "report" | "meta" | "lastSeen">;
  ledger: Pick<LedgerWriter, "due" | "flush" | "seq">;
  /** This life's first ticket epoch (tickets/epoch.ts). */
  epoch: number;
  now(): number;
}

export class Upkeep {
  #p: UpkeepParts;

  constructor(parts: UpkeepParts) {
    this.#p = parts;
  }

  /**
   * From its first 2xx (or an operator's config) on, the key is kept: written, listed, alarmed.
   * Only that first proof is written at once: a later 2xx's quotas and counters go with the next
   * flush, since a reply waits for its turn's writes to commit and the next request's acquire
   * (which carries this settle) would wait for them (1 to 2.5 ms a request inside workerd).
   */
  prove(now: number): void {
    const { store } = this.#p;
    if (!store.prove()) return;
    this.#p.listing.report(now);
    store.saveRow("epoch", String(this.#p.epoch));
    store.save();
  }

  /** An operator's change (a config, a reset): it keeps the key, is written at once, and the queue moves under it. */
  operated(now: number): void {
    this.prove(now);
    this.#p.store.save();
    this.#p.driver.pump();
  }

  /**
   * The alarm: sweeps leases whose Worker never came back and lets the queue move; writes the
   * pending usage to the ledger if it is due. Either may have nothing to do: an alarm set for one
   * runs both.
   */
  async alarm(): Promise<void> {
    const { core, store, ledger } = this.#p;
    store.fired();
    const now = this.#p.now();
    const gone = core.expireLeases(now);
    for (const l of gone) store.journal(l.id, null);
    this.#p.telemetry.expired(gone, now);
    this.#p.driver.pump();
    const due = ledger.due();
    // A failed write is kept for the next alarm (LedgerWriter never throws here). The counters
    // are written first: the records the write takes out of the outbox are counted in them.
    if (due !== null && due <= now) {
      store.save();
      await ledger.flush(now);
    }
    this.ensureAlarm();
  }

  /**
   * After a sweep, a write or a restart: the alarm goes to the earliest lease expiry (a scan, off
   * the hot path) or the next write of the usage, whichever comes first; none when neither waits.
   */
  ensureAlarm(): void {
    const next = [this.#p.core.nextLeaseExpiry(), this.#p.ledger.due()].filter((t) => t !== null);
    if (next.length > 0) this.#p.store.arm(Math.min(...next));
  }

  /** The state rows a save writes (restart.ts). */
  rows(): [string, string][] {
    const { core, telemetry: t, listing } = this.#p;
    return stateRows({ core: core.persisted(), counters: t.counters, samples: t.ring, counted: this.#p.ledger.seq, meta: listing.meta, lastSeen: listing.lastSeen });
  }
}
