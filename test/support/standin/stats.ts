// Counters the tests and the benchmark read: what arrived, when, and how it was answered.
import type { DialectName } from "./dialect.ts";
import type { LimitKind } from "./limits.ts";

export type Outcome =
  | "shed" // a flex-tier request refused for capacity (tiers.ts)
  | "success"
  | "rate_limited" // 429 from a bucket (a minute's, a day's, a month's) or the concurrency cap
  | "quota" // the credential's billing refusal: insufficient_quota, no credits or balance, a spending limit
  | "fault" // injected 500 / 503 / 524 / 529
  | "unauthorized"
  | "invalid"; // 400 or 404

export interface Attempt {
  /** Epoch ms when the request arrived. */
  at: number;
  credential: string | null;
  /** The header the credential came in: authorization (Bearer), api-key or x-api-key. */
  credentialHeader: string | null;
  /** Other credentials the request carried (in authorization, api-key, x-api-key, x-goog-api-key): a gateway's leftovers. */
  extraCredentials: string[];
  provider: DialectName | "bedrock";
  path: string;
  /** The query string as sent, without "?" ("" for none): Azure's api-version. */
  query: string;
  model: string;
  stream: boolean;
  status: number;
  outcome: Outcome;
  /** The first reported window's remaining after this attempt (requests before tokens); null without one. */
  remaining?: number | null;
}

export interface Stats {
  /** Every request to an API path, whatever its answer. */
  attempts: number;
  successes: number;
  /** All 429s from limits; rateLimitedBy says which limit. */
  rateLimited: number;
  rateLimitedBy: Record<LimitKind | "concurrency", number>;
  quotaErrors: number;
  /** Injected faults by status, e.g. {"529": 3} (Groq's flex refusals under "498"). */
  faults: Record<string, number>;
  unauthorized: number;
  invalid: number;
  inFlight: number;
  peakInFlight: number;
  /** Accepted requests waiting for hold to be turned off (see StandinOptions.hold). */
  held: number;
  /** Tokens the answers reported in their `usage` (every answer made, streamed or not). */
  usage: { input: number; output: number };
  /**
   * The same, per account and model as the request named them: the credential (Vertex: the
   * project) and the model (Vertex: as its path names it, `claude-sonnet-4-5@20250929`), with the
   * answers that reported it: what a ledger per key and model is compared with.
   */
  usageBy: Record<string, Record<string, { answers: number; input: number; output: number }>>;
  /**
   * Google's token endpoint (google-oauth.ts): tokens issued, assertions refused, and API requests
   * refused for an expired token or one it never issued.
   */
  oauth: Record<OAuthEvent, number>;
  /** Accepted requests whose answer was written to the end. */
  completed: number;
  /** Accepted requests whose caller left before the end. */
  aborted: number;
  /** Attempts per credential ("" for none). */
  perCredential: Record<string, number>;
  /** Outcomes per credential ("" for none): what a pool's members each served and refused. */
  byCredential: Record<string, CredentialStats>;
  /** Epoch ms of each attempt, in arrival order (bounded by logLimit). */
  attemptTimes: number[];
  firstAttemptAt: number | null;
  lastAttemptAt: number | null;
  /** One record per attempt (bounded by logLimit). */
  log: Attempt[];
  /** Provider batches: what was made, and each line's outcome once it ended. */
  batch: BatchStats;
  /** Service tiers (tiers.ts): per tier, the answers served, their tokens and the provider's charge, and the flex requests shed. */
  tiers: Record<"flex" | "standard" | "priority", TierStats>;
  /** The stand-in Bedrock's charge: per account, per model (as the path names it), what its answers reported. */
  bedrock: Record<string, Record<string, BedrockCharge>>;
}

export interface BedrockCharge {
  /** Answers served (faults and refusals are not). */
  answers: number;
  input: number;
  output: number;
}

export type OAuthEvent = "issued" | "refused" | "expired" | "unknown";

export interface TierStats {
  /** Answers served at the tier (faults aside). */
  answers: number;
  /** Requests refused for the tier's capacity (flex). */
  shed: number;
  input: number;
  output: number;
  /** What the provider charges for them at the tier's price (`prices`); answers of an unpriced model add nothing. */
  usd: number;
}

export interface BatchStats {
  /** Batches created (refused ones included). */
  created: number;
  /** Refused at validation or creation for lack of room in the enqueued-token limit. */
  refused: number;
  /** Cancels asked. */
  cancels: number;
  /** Lines answered: the generations a provider bills. */
  generations: number;
  failedLines: number;
  expiredLines: number;
  cancelledLines: number;
  /** Tokens the batch answers reported in their usage. */
  usage: { input: number; output: number };
  /** Files uploaded to /v1/files. */
  uploads: number;
}

export interface CredentialStats {
  attempts: number;
  successes: number;
  /** 429s from its limits (buckets or concurrency cap). */
  rateLimited: number;
  quotaErrors: number;
  /** Everything else: faults, 401s, 400s and 404s. */
  other: number;
}

const emptyCredential = (): CredentialStats => ({ attempts: 0, successes: 0, rateLimited: 0, quotaErrors: 0, other: 0 });

/** Adds one outcome to a credential's counters. */
function tally(c: CredentialStats, outcome: Outcome): void {
  c.attempts++;
  if (outcome === "success") c.successes++;
  else if (outcome === "rate_limited") c.rateLimited++;
  else if (outcome === "quota") c.quotaErrors++;
  else c.other++;
}

/**
 * Outcomes per credential of the logged attempts that arrived in [from, to) (epoch ms): a pool's
 * shares over one window of a run, e.g. the last minute. Bounded by the log (logLimit).
 */
export function byCredentialIn(log: readonly Attempt[], from = -Infinity, to = Infinity): Record<string, CredentialStats> {
  const out: Record<string, CredentialStats> = {};
  for (const a of log) {
    if (a.at < from || a.at >= to) continue;
    tally((out[a.credential ?? ""] ??= emptyCredential()), a.outcome);
  }
  return out;
}

function empty(): Stats {
  return {
    attempts: 0, successes: 0, rateLimited: 0,
    rateLimitedBy: { requests: 0, tokens: 0, input: 0, output: 0, dayRequests: 0, monthTokens: 0, concurrency: 0 },
    quotaErrors: 0, faults: {}, unauthorized: 0, invalid: 0, inFlight: 0, peakInFlight: 0, held: 0,
    usage: { input: 0, output: 0 }, usageBy: {}, oauth: { issued: 0, refused: 0, expired: 0, unknown: 0 }, completed: 0, aborted: 0, perCredential: {}, byCredential: {}, attemptTimes: [], firstAttemptAt: null, lastAttemptAt: null, log: [],
    batch: { created: 0, refused: 0, cancels: 0, generations: 0, failedLines: 0, expiredLines: 0, cancelledLines: 0, usage: { input: 0, output: 0 }, uploads: 0 },
    tiers: { flex: emptyTier(), standard: emptyTier(), priority: emptyTier() },
    bedrock: {},
  };
}

const emptyTier = (): TierStats => ({ answers: 0, shed: 0, input: 0, output: 0, usd: 0 });

export class StatsRecorder {
  #s: Stats = empty();

  /** Counts one attempt; `limitedBy` says which limit refused a rate-limited one. */
  record(a: Attempt, logLimit: number, limitedBy?: LimitKind | "concurrency"): void {
    const s = this.#s;
    s.attempts++;
    s.firstAttemptAt ??= a.at;
    s.lastAttemptAt = a.at;
    const key = a.credential ?? "";
    s.perCredential[key] = (s.perCredential[key] ?? 0) + 1;
    tally((s.byCredential[key] ??= emptyCredential()), a.outcome);
    s.log.push(a);
    if (s.log.length > logLimit) s.log.splice(0, s.log.length - logLimit);
    if (a.outcome === "success") s.successes++;
    else if (a.outcome === "rate_limited") {
      s.rateLimited++;
      if (limitedBy) s.rateLimitedBy[limitedBy]++;
    } else if (a.outcome === "quota") s.quotaErrors++;
    else if (a.outcome === "shed") s.tiers.flex.shed++;
    else if (a.outcome === "fault") s.faults[a.status] = (s.faults[a.status] ?? 0) + 1;
    else if (a.outcome === "unauthorized") s.unauthorized++;
    else s.invalid++;
  }

  /** Counts the tokens one answer reports in its usage, and (when told) whose and for which model. */
  used(input: number, output: number, account?: string, model?: string): void {
    this.#s.usage.input += input;
    this.#s.usage.output += output;
    if (account === undefined || model === undefined) return;
    const u = ((this.#s.usageBy[account] ??= {})[model] ??= { answers: 0, input: 0, output: 0 });
    u.answers++;
    u.input += input;
    u.output += output;
  }

  /** One event at Google's token endpoint or of a token it issued. */
  oauth(event: OAuthEvent): void {
    this.#s.oauth[event]++;
  }

  /** One Bedrock answer served to `account` for `model`, with the tokens it reports. */
  bedrockCharged(account: string, model: string, input: number, output: number): void {
    const c = ((this.#s.bedrock[account] ??= {})[model] ??= { answers: 0, input: 0, output: 0 });
    c.answers++;
    c.input += input;
    c.output += output;
  }

  /** One answer served at `tier`: its tokens and what the provider charges for it (null: an unpriced model). */
  served(tier: "flex" | "standard" | "priority", input: number, output: number, usd: number | null): void {
    const t = this.#s.tiers[tier];
    t.answers++;
    t.input += input;
    t.output += output;
    t.usd += usd ?? 0;
  }

  /** One batch line ended: answered (with its usage), failed at the provider, expired or cancelled. */
  batchLine(kind: "succeeded" | "failed" | "expired" | "cancelled", input = 0, output = 0): void {
    const b = this.#s.batch;
    if (kind === "succeeded") {
      b.generations++;
      b.usage.input += input;
      b.usage.output += output;
    } else if (kind === "failed") b.failedLines++;
    else if (kind === "expired") b.expiredLines++;
    else b.cancelledLines++;
  }

  /** A batch was created (`refused`: it will fail, or was refused, for lack of queue room), a cancel asked, or a file uploaded. */
  batchEvent(what: "created" | "refused" | "cancels" | "uploads"): void {
    this.#s.batch[what]++;
  }

  begin(): void {
    this.#s.inFlight++;
    this.#s.peakInFlight = Math.max(this.#s.peakInFlight, this.#s.inFlight);
  }

  /** A request starts (+1) or stops (-1) waiting for hold to be turned off. */
  holding(delta: 1 | -1): void {
    this.#s.held += delta;
  }

  end(aborted: boolean): void {
    this.#s.inFlight--;
    if (aborted) this.#s.aborted++;
    else this.#s.completed++;
  }

  /** A deep copy, safe to keep while traffic goes on. */
  snapshot(): Stats {
    const s = structuredClone(this.#s);
    s.attemptTimes = s.log.map((a) => a.at);
    return s;
  }

  /** Clears the counters; requests still in flight stay counted as in flight. */
  reset(): void {
    const { inFlight, held } = this.#s;
    this.#s = empty();
    this.#s.inFlight = inFlight;
    this.#s.held = held;
    this.#s.peakInFlight = inFlight;
  }
}
