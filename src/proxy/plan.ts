// What the retry loop (run.ts) is given: one caller request, resolved and read, and the world it
// runs in (fetch, the clock, randomness). A type of its own, below the loop and its steps.
import type { BudgetHandle } from "../budget/stage";
import type { GatewayConfig } from "../config/limits";
import type { KeyMeta } from "../limiter/types";
import type { Dialect } from "../providers/dialect";
import type { RequestSpan } from "../observe/spans";
import type { TierPlan } from "../tiers/plan";
import type { Meter } from "../usage/meter";
import type { Tags } from "../usage/types";
import type { Who } from "./caller";
import type { LimiterCalls } from "./limiter-client";
import type { Route } from "./target";

/** One caller request, resolved and read, ready to be sent as many times as policy allows. */
export interface Plan {
  url: URL;
  method: string;
  headers: Headers;
  body: Uint8Array | null;
  key: KeyMeta;
  /** What the provider's answers mean (providers/dialects.ts); absent: `generic`, every family. */
  dialect?: Dialect;
  /** Who asks, for the key's fair shares; absent: the key's default caller. */
  who?: Who;
  cost: number;
  /** Of `cost`, the output allowance: each attempt's key is charged the two apart where its row says so (policy/estimate.ts costFor). */
  out?: number;
  /** `cost` prices media by their bytes, which a provider may count far lower: too large for a key only if the provider says so (too-large.ts). */
  unsure?: boolean;
  /** The caller asked for a streamed answer: pass it through as it comes, whatever its type. */
  stream?: boolean;
  deadline: number;
  maxAttempts: number;
  gateway: GatewayConfig;
  signal: AbortSignal;
  waitUntil: (p: Promise<unknown>) => void;
  /** Who the answer's usage is counted under in the ledger, besides its key and model. */
  tags?: Tags;
  /** Reads each answer's usage for the ledger; absent: nothing is counted. */
  meter?: Meter;
  /** A budget's charges for attempts that were sent and got no answer (budget/stage.ts); absent: no budget. */
  charges?: Pick<BudgetHandle, "lost" | "again">;
  /** A pool's members (a virtual key): each attempt goes to the one that can start it soonest. */
  route?: Route;
  /** Stops the request while it waits, never mid-attempt (its virtual key was revoked). */
  stop?: AbortSignal;
  /** A GenAI operation (its name, the model it names, its arrival): a final error's settle says how it ended (the metrics). */
  operation?: { op: string; model: string; start: number };
  /** The request's span when it is traced (OTEL_*): each attempt is a child of it. */
  trace?: RequestSpan;
  /** The service tier policy chose for it (issue 35); absent: none asked, nothing written. */
  tier?: TierPlan;
  /** A limiter for a key (a tier with limits of its own has a key of its own). */
  limiterFor?: (m: KeyMeta) => LimiterCalls;
  /** Hears what each attempt got from the provider it went to: its status, or null when no answer came (the gateway's counts, directory/upstream.ts). */
  upstream?: (provider: string, status: number | null) => void;
}

export interface Deps {
  fetch: typeof fetch;
  now: () => number;
  random: () => number;
  /** Defaults to real time; the simulator passes its virtual clock's. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}
