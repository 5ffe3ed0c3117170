// A key's listing: who its limiter is for, when a request last asked it, and its entry in the
// Directory (the admin list). The Directory is told at once on the key's first request (after a
// restart too), then at most every REPORT_MS, fire-and-forget from inside the object, so no caller
// ever waits on it; a failed report is tried again after REPORT_RETRY_MS. A key not kept (store.ts)
// is never listed.
import type { DirectoryEntry } from "../directory/object";
import type { KeyMeta } from "./types";

/** How often a busy key refreshes its Directory entry; the admin list reads live numbers anyway. */
export const REPORT_MS = 15_000;
export const REPORT_RETRY_MS = 1_000;

export interface ListingParts {
  /** Who the key is for, and when it was last asked, as the last life wrote them. */
  meta: KeyMeta | null;
  lastSeen: number | null;
  /** Tells the Directory (it may throw or reject: the report is tried again). */
  send(entry: DirectoryEntry): Promise<unknown>;
  /** Keeps the object up until a report is done (the object's `ctx.waitUntil`). */
  waitUntil(done: Promise<unknown>): void;
  /** Whether the key is kept (store.ts): only a kept key is listed. */
  kept(): boolean;
  /** The key's numbers now, for its entry. */
  levels(): Pick<DirectoryEntry, "limit" | "inFlight" | "queued">;
}

export class Listing {
  meta: KeyMeta | null;
  lastSeen: number | null;
  #parts: ListingParts;
  /** When the Directory was last told (in this life). */
  #reportedAt = -Infinity;

  constructor(parts: ListingParts) {
    this.meta = parts.meta;
    this.lastSeen = parts.lastSeen;
    this.#parts = parts;
  }

  /** A call for the key (`asked`: a request, not the end of old ones): who it is for (the first call says), when, and the Directory told if due. */
  touch(meta: KeyMeta, now: number, asked: boolean): void {
    this.meta ??= { key: meta.key, provider: meta.provider, model: meta.model };
    if (asked) this.lastSeen = now;
    this.report(now);
  }

  /** Tells the Directory, unless it was told within REPORT_MS or the key is not kept. */
  report(now: number): void {
    const p = this.#parts;
    if (!p.kept() || !this.meta || now - this.#reportedAt < REPORT_MS) return;
    this.#reportedAt = now;
    const entry = { ...this.meta, ...p.levels(), lastSeen: now };
    // Async so that even a missing binding only fails the report, never the caller's call.
    const sent = (async () => p.send(entry))();
    p.waitUntil(
      sent.catch(() => {
        this.#reportedAt = now - REPORT_MS + REPORT_RETRY_MS;
      }),
    );
  }
}
