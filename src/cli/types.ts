import type { GatewayConfig, LimiterConfig } from "../config/limits";
import type { Tier } from "../providers/dialect";

/**
 * The batch command's public shapes, in a module with no runtime imports: Node-side tests and
 * harnesses can type against it without pulling the limiter into their typecheck.
 */

/** One line of the output, in the OpenAI Batch API output shape. */
export interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string | null; body: unknown } | null;
  error: { code: string; message: string } | null;
}

/**
 * sync: every line through the limiter (or gateway); flex: the same, at the flex tier where the
 * line's provider sells it, falling back to standard; provider: the providers' batch APIs; auto:
 * flex when the deadline is within a batch's completion window, else batch APIs where the line's
 * provider has one and sync for the rest.
 */
export type BatchMode = "sync" | "flex" | "provider" | "auto";

export interface BatchOptions {
  input: string;
  out: string;
  /** Default sync. */
  mode?: BatchMode;
  /** Provider mode: cancel the running batches the state file names, and stop. */
  cancel?: boolean;
  /** Provider mode: epoch ms past which running batches are cancelled and what they did not answer runs synchronously. */
  deadline?: number;
  /** Provider mode: how often running batches are looked at (default 30 s). */
  pollMs?: number;
  /** Provider mode: most lines per batch (default: the provider's limit). */
  batchLines?: number;
  /** Provider mode: most bytes per batch (default: the provider's limit; 8 MiB through a gateway). */
  batchBytes?: number;
  /** Asks the user a yes/no question (a TTY); absent: nobody to ask. */
  confirm?: (question: string) => Promise<boolean>;
  /** Provider mode: how long to wait for a second Ctrl-C after the first (default 10 s with confirm, else 0). */
  lingerMs?: number;
  /** Provider of lines that name none (default openai). */
  provider?: string;
  /** A Slotgate gateway's URL: it does the limiting. Without it, providers are called directly. */
  gateway?: string;
  /**
   * Gateway mode: `x-slotgate-caller` (default `batch.<input file name>`), so the job has a line of
   * its own and teammates on the same key are not stuck behind it.
   */
  caller?: string;
  /** Gateway mode: `x-slotgate-priority` (default low: a batch job yields to interactive calls, never starves). */
  priority?: "high" | "normal" | "low";
  /** Direct mode: replaces every provider's base URL (tests, a stand-in, a proxy). */
  baseUrl?: string;
  /** Most items open at once (default 16). */
  concurrency?: number;
  resume?: boolean;
  /** Where credentials are read (default process.env). */
  env?: Record<string, string | undefined>;
  /** First fires: nothing new is sent, requests in flight finish. */
  stop?: AbortSignal;
  /** Fires after `stop`: requests in flight are cut and recorded as interrupted. */
  abort?: AbortSignal;
  /** Overrides of the gateway's limiter defaults (direct mode). */
  limiter?: Partial<LimiterConfig>;
  /** Overrides of the gateway's retry defaults (maxAttempts, back-off, deadline). */
  retry?: Partial<GatewayConfig>;
  requestTimeoutMs?: number;
  progress?: { stream: NodeJS.WriteStream; tty: boolean; plainEveryMs?: number };
  fetch?: typeof fetch;
  now?: () => number;
  random?: () => number;
}

export interface BatchSummary {
  out: string;
  /** Non-blank input lines. */
  lines: number;
  /** Already answered in the output (--resume). */
  skipped: number;
  succeeded: number;
  /** Error lines written, by error code. */
  failed: number;
  failedByReason: Record<string, number>;
  /** Of the failed, those --resume would run again (rate limit or transient errors that ran out of attempts). */
  retryable: number;
  /** Stopped by Ctrl-C: never sent, or cut in flight. --resume runs them. */
  notDone: number;
  absorbed429: number;
  retries: number;
  wallMs: number;
  stopped: boolean;
  /** Tokens the succeeded answers reported, and their cost at the price table. */
  spend: SpendSummary;
  /** The variables this run read credentials from (OPENAI_API_KEY, ...): a printed --resume needs them set again. */
  credentials: string[];
  /** Provider mode: the batches, and how their lines ended. */
  batches?: BatchesSummary;
}

export interface BatchesSummary {
  /** Batches of this job by their last state (created by this run or an earlier one). */
  byStatus: Record<string, number>;
  /** Lines answered by a provider batch in this run. */
  answered: number;
  /** Lines run synchronously because their batch failed, expired or was cancelled, or could not take them. */
  fallback: number;
  /** Batches still running (stopped early): --resume attaches to them. */
  running: string[];
  /** Where the batch ids are kept. */
  stateFile: string;
  /** What needs a person's eye (a batch the job could not tell apart from another after a crash). */
  notes: string[];
}

/** Why a line of a run that asked a tier went at standard: its model sells none here, the tier refused it, or the tier looked shed. */
export type StandardWhy = "not_sold" | "refused" | "shed";

/** What a run's answers used and cost (spend.ts adds them up). */
export interface SpendSummary {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** Priced answers only. */
  costUsd: number;
  /** Answers with usage but no price for their model. */
  unpriced: number;
  /** Successful answers that carried no usage. */
  unknownUsage: number;
  /** Of costUsd, what answers from provider batches cost (at batch prices), and how many they were. */
  batchCostUsd: number;
  batchAnswers: number;
  /** What the same answers would have cost synchronously, at standard. */
  syncCostUsd: number;
  /** Synchronous answers by the service tier that served them (issue 35): how many, and what they cost. */
  tiers: Partial<Record<Tier, { answers: number; costUsd: number }>>;
  /** The tier the run asked for (`--mode flex`), and why each answer not served at it was not (issue 39); the models that sell none. */
  asked?: Tier;
  why: Partial<Record<StandardWhy, number>>;
  notSold: string[];
}
