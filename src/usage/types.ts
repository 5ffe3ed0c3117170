// What a Worker tells a key's limiter about one answer's usage (types only: the limiter's types import them).
import type { Tier } from "../providers/dialect";
import type { Tokens } from "./tokens";

/** Who a request is counted under besides its key and model; the pools' code fills virtualKey and pool. */
export interface Tags {
  caller?: string;
  virtualKey?: string;
  pool?: string;
}

/**
 * A GenAI operation's end, for the `gen_ai.client.*` metrics: its `gen_ai.operation.name`, the
 * model it named, its duration (arrival to the answer's end) and its `error.type` if it failed.
 */
export interface Ended {
  op: string;
  model: string;
  ms: number;
  error?: string;
}

/** One answer, as it goes to its key's limiter (with the release or settle it rides). */
export interface UsageRecord extends Tags {
  model: string;
  /** The service tier that served it (as the provider reports it, else the tier it was sent at): what it is priced at. */
  tier?: Tier;
  /** null: the answer carried no usage (counted as unknown, never guessed). */
  tokens: Tokens | null;
  /** null: no usage, or a model with no price (counted in tokens, shown as unpriced). */
  costUsd: number | null;
  /** For the metrics only (not the ledger's): the operation it ended. */
  ended?: Ended;
}
