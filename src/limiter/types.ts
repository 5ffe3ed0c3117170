import type { LimiterOverride } from "../config/limits";
import type { CallerView } from "./callers";
import type { Outcome } from "./state";
import type { Lane } from "./lanes";
import type { Shed } from "./tier-outlooks";
import type { Tier } from "../providers/dialect";
import type { Ended, UsageRecord } from "../usage/types";
import type { TooLarge } from "./too-large";

/** Who the limiter is for; stored on first use so admin views can name it. */
export interface KeyMeta {
  key: string;
  provider: string;
  model: string;
}

export interface AcquireRequest extends KeyMeta {
  /** Chosen by the Worker per attempt, so a repeated call is the same call. */
  leaseId: string;
  /** Estimated tokens (prompt plus max output). */
  cost: number;
  /**
   * The max output: what a window of generated tokens alone is charged (absent: none). Sent only
   * for a provider that counts generated tokens apart, whose `cost` is then its prompt's alone.
   */
  out?: number;
  /** A retry rejoins at the head of the queue. */
  retry: boolean;
  /** How long the caller can still wait, in ms (relative: the Worker's and the object's clocks differ). */
  waitMs: number;
  /** Who asks (`x-slotgate-caller`, else a gateway token's hash); absent: the key's default caller. */
  caller?: string;
  /** `x-slotgate-priority`; absent: normal. */
  priority?: Lane;
  /** Sent for a pool (a virtual key): the member's in/out state applies, and the answer carries its view. */
  pooled?: boolean;
  /** The service tier the attempt asks to go at, when not standard: the grant says whether the key has it shed. */
  tier?: Tier;
}

/** What a pooled request learns of the member it asked, for the Worker's choice of the next member. */
export interface MemberView {
  /** About how long until one more request of this cost could start here, in ms. */
  waitMs: number;
  /** Requests per minute its quota allows (learned); absent while no quota is known. */
  perMin?: number;
  /** Out of its pool: ms until it may be tried again, and why. */
  outMs?: number;
  outReason?: string;
}

/** Pacing hints for the caller's own scheduler: the key's concurrency limit, and the pace a known quota sets. */
export interface Pacing {
  limit: number;
  /** Requests per minute the key is paced at; absent while no quota is known. */
  ratePerMin?: number;
}

/**
 * A grant, or a refusal: `queue_timeout` (no slot before the deadline), `out` (a pool member out),
 * `too_large` (its cost is above a limit the provider told and refuses larger requests against:
 * it could never go; `tooLarge` says which, too-large.ts).
 */
export type AcquireResult = (
  | ({ granted: true; leaseId: string; waitedMs: number; leaseTtlMs: number; shed?: Shed } & Pacing)
  | ({ granted: false; reason: "queue_timeout" | "out" | "too_large"; retryAfterMs: number; tooLarge?: TooLarge } & Partial<Pacing>)
) & { view?: MemberView };

export interface SettleRequest extends Outcome {
  /** Release the slot in the same call (an attempt whose body is already consumed). */
  release?: boolean;
  /** The answer's usage, for the ledger: a plain answer's rides its settle. */
  usage?: UsageRecord;
  /** A request's final error: the GenAI operation it ended (the metrics). */
  ended?: Ended;
}

export interface QuotaView {
  limit: number | null;
  remaining: number;
  resetAt: string | null;
}

/** `GET /admin/keys/:key`, as the design's contract lists it. */
export interface LimiterSnapshot extends KeyMeta {
  /** For a pool member's key: out of its pool until when, and why; null while in. */
  out?: { until: string; reason: string } | null;
  /** Requests per minute its quota allows, as learned; null while no quota is known. */
  ratePerMin?: number | null;
  /** The share of its recent prompt tokens its provider read from its prompt cache; only on a key whose row leaves those reads out (cache-share.ts). */
  cacheReadShare?: number;
  /** `tickets`: slots granted ahead to isolates and not used yet (tickets/), or held back for them after a restart; beside `inFlight`. */
  concurrency: { limit: number; min: number; max: number; inFlight: number; queued: number; phase: "slow_start" | "steady"; tickets: number };
  cooldownUntil: string | null;
  /** `output`: generated tokens alone, only on a key whose provider tells that window apart (Fireworks', Anthropic's OTPM). */
  quotas: { requests: QuotaView | null; tokens: QuotaView | null; output?: QuotaView | null };
  metrics: {
    totalRequests: number;
    completedRequests: number;
    failedRequests: number;
    rateLimitHits: number;
    retriedRequests: number;
    avgLatencyMs: number;
    p50LatencyMs: number;
    p99LatencyMs: number;
  };
  history: { at: string; from: number; to: number; reason: string }[];
  config: LimiterOverride;
  lastSeen: string | null;
  /** Who has been asking of this key, busiest share of the last minute first. */
  callers: CallerView[];
}

/**
 * One call a Worker isolate makes of a key's limiter, carried with others in one `exchange`.
 * `ageMs`: how long before the batch left the op was made (the Worker's clock), so a release or a
 * settle that waited for company is dated when it happened, not when it arrived.
 */
export type Op = { ageMs?: number } & (
  | { t: "acquire"; req: Omit<AcquireRequest, keyof KeyMeta> }
  | { t: "settle"; id: string; outcome: SettleRequest }
  | { t: "release"; id: string; usage?: UsageRecord }
  | { t: "renew"; id: string; cost?: number }
  | { t: "cancel"; id: string }
  /** A request went upstream on a ticket (tickets/): said after, off its path. */
  | { t: "use"; id: string; cost: number; out?: number; caller?: string; priority?: Lane }
);

/** An acquire not answered at once: in a session its answer comes down the stream; after an exchange, `acquire` on the same id waits for it. */
export type Queued = { queued: true };

/**
 * The limiter's word on a failed attempt its Worker will retry. `now`: nothing the key knows keeps
 * the retry from the next free slot (a transient fault outside a storm, or a refusal for
 * concurrency while the key's gate is open), so it comes back at once and the queue places it.
 * `wait`: the provider's hint, or the Worker's own backoff, as before.
 */
export interface SettleAnswer {
  retry: "now" | "wait";
}
export type OpResult = AcquireResult | Queued | boolean | SettleAnswer;

/** An op a request writes on its session after the first; `n` numbers the ones whose answer it waits for. */
export type SessionOp = Op & { n?: number };
/** The object's answer to a session's numbered op (a queued first acquire is number 0). */
export interface SessionAnswer {
  n: number;
  r: OpResult;
}

export interface SessionReply extends ExchangeReply {
  /** JSON lines of SessionAnswer, in the order the answers come; closed when the session ends. */
  answers: ReadableStream<Uint8Array>;
}

export interface ExchangeReply {
  /** One per op, in order. */
  results: OpResult[];
  /** Waiters in line after the batch, and slots free: with none waiting and room to spare, a Worker may hold its releases a moment for company. */
  queued: number;
  room?: number;
  /** The key's ticket epoch: an isolate uses no ticket of another (tickets/epoch.ts). */
  epoch?: number;
  /** Tickets for the isolate that asked: admissions granted ahead, each for a request of up to `cost` tokens (and `out` of output). */
  tickets?: Tickets;
}

export type Tickets = { ids: string[]; cost: number; out?: number; leaseTtlMs: number } & Pacing;
