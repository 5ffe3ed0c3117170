import type { GatewayConfig, LimiterConfig } from "../config/limits";
import type { SpendSummary } from "./spend";

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

export interface BatchOptions {
  input: string;
  out: string;
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
}
