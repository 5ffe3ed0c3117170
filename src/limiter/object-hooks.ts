// What a key's object does with its driver's decisions (driver.ts, DriverHooks): a lease held is
// journalled and its sweep armed, a lease gone is struck from the journal, an answer that proves the
// key keeps it, tickets leave behind their mark (tickets/mark.ts), and the telemetry hears each.
import type { DriverHooks } from "./driver";
import type { LimiterCore } from "./core";
import { type LimiterStore, proves } from "./store";
import type { Telemetry } from "./telemetry";
import type { TicketMark } from "./tickets/mark";

export interface HookParts {
  core: LimiterCore;
  store: Pick<LimiterStore, "keep" | "journal" | "idle" | "saveRow">;
  telemetry: Pick<Telemetry, "granted" | "timedOut" | "settle" | "moved">;
  mark: TicketMark;
  now(): number;
  /** The key is proven: kept from now on (the object's). */
  prove(now: number): void;
}

export function objectHooks(p: HookParts): DriverHooks {
  const { core, store, telemetry } = p;
  return {
    granted: (w, waitedMs) => {
      store.keep(core.lease(w.id)!);
      telemetry.granted(waitedMs, p.now());
    },
    timedOut: (how, waitedMs, retryAfterMs) => telemetry.timedOut(how, waitedMs, retryAfterMs, p.now()),
    settled: (id, o, now, apply) => telemetry.settle(id, o, now, apply),
    answered: (o, now) => {
      if (proves(o)) p.prove(now);
    },
    // A lease taken back on renewal (see core.renew) is journalled and swept like a granted one.
    takenBack: (lease) => store.keep(lease),
    dropped: (id) => {
      store.journal(id, null);
      // An unproven key's sweep is a timer, which holds the object in memory: none while nothing is held.
      if (core.leases.size === 0) store.idle();
    },
    moved: (now) => telemetry.moved(now),
    // Tickets are journalled as leases (most come back before a flush). That some may be out, and
    // how many at most, is written before the reply that carries them leaves (it waits for its
    // turn's writes): a restart before its time holds them back (tickets/mark.ts).
    issued: (ids) => {
      for (const id of ids) store.keep(core.lease(id)!);
      const now = p.now();
      const mark = p.mark.issued(now, core.limitAt(now));
      if (mark) store.saveRow("tickets", JSON.stringify(mark));
    },
  };
}
