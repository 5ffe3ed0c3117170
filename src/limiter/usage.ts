// An answer's usage at its key's object: into the outbox the ledger is written from (usage/writer.ts)
// and into the key's counters (counters.ts), once per lease, under the caller its lease was filed
// under; after a restart, the records kept since the counters were last written are counted again.
import type { UsageRecord } from "../usage/types";
import type { LedgerWriter } from "../usage/writer";
import { DEFAULT_CALLER } from "./callers";
import { type Counters, countOperation, countUsage } from "./counters";

export interface UsageParts {
  /** The key's outbox for the ledger (usage/writer.ts). */
  ledger: Pick<LedgerWriter, "add" | "due" | "since">;
  /** The key's counters now (Telemetry's: a reset replaces them). */
  counters(): Counters;
  /** Sets the alarm that writes the outbox (LimiterStore.arm). */
  arm(at: number): void;
}

export class KeyUsage {
  #parts: UsageParts;

  constructor(parts: UsageParts) {
    this.#parts = parts;
  }

  /**
   * After a restart: the records kept after the counters were last written (`counted`: the ledger's
   * seq then; a restart within a flush) are counted again. The outbox refuses them if they are sent
   * once more, so nothing else would count them.
   */
  recount(counted: number | undefined): void {
    if (counted !== undefined) for (const usage of this.#parts.ledger.since(counted)) this.#count(usage);
  }

  /**
   * One answer's usage, made at `at`, once per lease: into the outbox and the counters. Its caller
   * is the one its lease was filed under (`filed`; callers.ts: past MAX_CALLERS, the overflow one),
   * so a flood of caller names makes no more ledger rows than callers a key may have.
   */
  add(leaseId: string, key: string, filed: string | undefined, usage: UsageRecord, at: number): void {
    const p = this.#parts;
    // Kept whole (its `ended` too): a restart counts the records after the last write again from here.
    const record = filed !== undefined && filed !== DEFAULT_CALLER ? { ...usage, caller: filed } : usage;
    if (!p.ledger.add(leaseId, key, record, at)) return;
    this.#count(usage);
    const due = p.ledger.due();
    if (due !== null) p.arm(due);
  }

  #count(usage: UsageRecord): void {
    const c = this.#parts.counters();
    countUsage(c, usage.tokens, usage.costUsd);
    if (usage.ended) countOperation(c, usage.ended, usage.tokens);
  }
}
