/**
 * @module What a provider's answers mean, as one row of data: where its limits are told and in
 * what window, what each refusal means, where its usage is and how a stream is asked for it, and
 * what scopes its limits. The parser (policy/limits.ts), the classifier (policy/classify.ts), the
 * meter (usage/) and the key (providers/key.ts) read these rows; none of them names a provider.
 * The rows themselves are in dialects.ts.
 */

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;
/** A month's allowance is counted as 30 days: only its pace depends on it, never a wait. */
export const MONTH_MS = 30 * DAY_MS;

/**
 * How a reset header is written: a Go duration (`6m0s`, `7.66s`), an RFC 3339 moment, delta
 * seconds, epoch ms, or `any` (every form `parseReset` knows: a custom provider's).
 */
export type ResetFormat = "duration" | "rfc3339" | "seconds" | "epoch-ms" | "any";

/**
 * One window a provider tells of in headers. Only `remaining` is required: Azure sends nothing
 * else, and such a window is learned (limiter/quota.ts). A window with a limit but no reset
 * refills at its limit per period.
 */
export interface WindowSpec {
  limit?: string;
  remaining: string;
  reset?: string;
  resetFormat?: ResetFormat;
  /** How long the limit is counted over: per second, minute, day or month. */
  periodMs: number;
  /** An allowance that does not come back before its reset (a month's, a day's): exhausted, it is spent, not a rate limit. */
  cap?: boolean;
  /**
   * The provider refuses outright one request whose cost is above this window's limit, however long
   * it waits (OpenAI's "Request too large", Groq's 413): with the limit told, the gateway refuses
   * such a request at once instead of holding the key's queue for it (limiter/too-large.ts).
   */
  refusesLarger?: boolean;
}

/**
 * Windows of one kind (requests or tokens), as alternatives: the first group any of whose windows
 * the answer reports is read, the tightest of that group taken (the generic row's Anthropic
 * `tokens` window before its input/output pair). `ietf`: the structured `RateLimit` fields.
 */
export type WindowGroup = readonly WindowSpec[] | "ietf";

/** A server's wait hint in a header: milliseconds, or `retry-after`'s seconds or HTTP-date. */
export interface HintSpec {
  header: string;
  unit: "ms" | "retry-after";
}

/**
 * Hints only in a refusal's body, by the shape they come in. `error-details`: Google's error
 * model (google.rpc.Status `details`): `RetryInfo.retryDelay`, and `QuotaFailure` whose `quotaId`
 * names the window's period and kind and whose `quotaValue` (when sent) its limit.
 * `metadata-headers`: OpenRouter's `error.metadata.headers` with `X-RateLimit-Limit/Remaining/Reset`
 * (epoch ms). `try-again-in`: a message's "Please try again in 7.66s" (a wait only: never money
 * or key evidence). `quota-words`: a message that names the quota it hit in words (Vertex's metric,
 * Bedrock's "Too many tokens"), for the kind of window a row that tells none learns from it.
 */
export type BodyHint = "error-details" | "metadata-headers" | "try-again-in" | "quota-words";

/** `retry-after`'s seconds or HTTP-date: the wait hint a row reads when it names none. */
export const RETRY_AFTER: HintSpec = { header: "retry-after", unit: "retry-after" };

/** Output tokens drawn from a window at more than one each, on some models. */
export interface OutputRate {
  rate: number;
  models: RegExp;
}

export interface LimitsSpec {
  requests: readonly WindowGroup[];
  tokens: readonly WindowGroup[];
  /**
   * Windows of generated tokens alone (Fireworks' "Generated TPM", Anthropic's OTPM), read as `tokens` are: a
   * request draws its output allowance from them. A row that has them counts its prompt apart too:
   * its `tokens` windows are then charged a request's prompt alone. Absent: none.
   */
  output?: readonly WindowGroup[];
  /**
   * Prompt tokens read from the provider's prompt cache are left out of its `tokens` windows
   * (Anthropic's cache-aware ITPM), except on models `except` matches: a key is charged the part of
   * its prompts answers show was not read from the cache (limiter/cache-share.ts). Only on a row
   * with `output` windows, whose `tokens` are charged the prompt alone. Absent: every token counts.
   */
  cacheReadsFree?: { except?: RegExp };
  /**
   * Its `tokens` windows count the prompt alone, and no window counts the output (Gemini's "Tokens
   * per minute (input)"): a request is charged its estimate less its output allowance. Absent: both count.
   */
  promptOnly?: true;
  /**
   * Its `tokens` windows draw each output token at `rate` tokens on models `models` matches (a key's
   * model, its region first where it has one): Bedrock's "token burndown rate". Absent: one.
   */
  outputRate?: OutputRate;
  /**
   * Its provider draws a request's reservation (prompt and output limit) from its tokens quota when
   * it starts and gives back what the answer did not use when it ends (Bedrock): a tokens window
   * stated or learned from refusals is credited so from each answer's usage (limiter/quota.ts
   * giveBack), the answer counted at its prompt less cache reads and its output at `outputRate`.
   * Absent: what a request was charged stays drawn.
   */
  returnsUnused?: true;
  /**
   * A request that names no output limit is reserved the model's whole output (Bedrock's): it is
   * charged the model's `maxOutput` from PRICES where the table knows it. Absent, or a model it does
   * not know: DEFAULT_OUTPUT_TOKENS (policy/estimate.ts).
   */
  unstatedOutput?: "model";
  /**
   * What the row's windows count an image in a request, inline or by reference, at most (an inline
   * one smaller: its bytes / 4; policy/media.ts). Absent: IMAGE_TOKENS, about the most Anthropic counts.
   */
  imageTokens?: number;
  /** Wait hints in headers, the most precise first; absent: `retry-after` alone. */
  hints?: readonly HintSpec[];
  /** Hints in a refusal's body; absent: none. */
  body?: readonly BodyHint[];
  /**
   * The period of the limit a refusal speaks for when no window was told (a provider that sends
   * no limit headers): the key is paced from its refusals at their count per this period.
   * Absent: a minute.
   */
  refusalPeriodMs?: number;
}

/**
 * What a refusal means. `rate_limit`: wait and retry, the key's concurrency may be cut.
 * `capacity`: the provider (or a tier of it) is full: retried after a backoff, never cuts, never
 * shuts the key's gate. `spent`: credits, balance, a spending limit or a day's or month's cap:
 * back at once, never retried, and a pool member out. `bad_key`: the key cannot be used at all
 * (a pool member out). `transient`: retried, never cuts. `too_large`: this one request is larger
 * than the key's limit allows (OpenAI's "Request too large" 429, Groq's 413): back at once as it
 * is, never retried, never cuts or shuts the gate; in a pool, tried on another member.
 */
export type Meaning = "rate_limit" | "capacity" | "spent" | "bad_key" | "transient" | "too_large";

/**
 * One documented refusal. Every condition given must hold. Money and key evidence comes only from
 * what the provider fills itself (`code`, `reason`, `quotaId`, the status) or from a fixed sentence
 * matched whole (`sentence`): never from free text, which may echo what the caller sent.
 */
export interface RefusalRule {
  means: Meaning;
  status?: readonly number[];
  /** Matched whole, lowercased, against the error's `code`, `type`, `details.error_code` and `status`. */
  code?: readonly string[];
  /** The error's whole message (or the `error` itself where it is a plain string). Anchored. */
  sentence?: RegExp;
  /** Google `QuotaFailure` violations' `quotaId`. */
  quotaId?: RegExp;
  /** Google `ErrorInfo` reasons. */
  reason?: readonly string[];
  /** The name a pool gives the member's out; default: the code or reason matched, else the meaning. */
  evidence?: string;
}

/**
 * An API version a field came with: a request takes it on a route with no version (`versionless`,
 * matched against the route after the provider and its resource), or where its `param` names a
 * version dated `date` or later.
 */
export interface VersionSince {
  date: string;
  param: string;
  versionless: RegExp;
}

/**
 * Where answers carry usage, by default: top-level `usage` (OpenAI, Anthropic), `usageMetadata`
 * (Gemini), Anthropic's `message_start` (`message.usage`) and OpenAI Responses' `response.completed`
 * (`response.usage`). A dialect adds its own (Groq's `x_groq.usage`).
 */
export const USAGE_AT: readonly (readonly string[])[] = [["usage"], ["usageMetadata"], ["message", "usage"], ["response", "usage"]];

/** Where an answer's usage is, and whether (and how) a streamed answer may be asked for it. */
/** Headers telling a plain answer's token counts (Bedrock's `X-Amzn-Bedrock-Input-Token-Count` ...), each counting apart from the cache as Anthropic's fields do. */
export interface UsageHeaders {
  input: string;
  output: string;
  cached?: string;
  cacheWrite?: string;
}

/** A stream of binary frames (AWS's event-stream encoding): its media type, and where a frame's event carries the invocation's totals. */
export interface UsageFrames {
  /** The answer's content type, matched as a part of it. */
  type: string;
  /** The field of a `chunk` event's inner JSON that holds the invocation's token counts. */
  metrics?: string;
}

export interface UsageSpec {
  /** Paths to a usage object in an answer or a stream event, tried in order. */
  at: readonly (readonly string[])[];
  /** Headers that tell a plain answer's usage where its body does not. */
  headers?: UsageHeaders;
  /** Streams in binary event-stream frames rather than text lines (usage/event-frames.ts). */
  frames?: UsageFrames;
  /**
   * `stream_options`: a streamed chat completion may carry `stream_options.include_usage` (then
   * the gateway asks for it and strips the extra chunk for a caller who did not). `since`: only
   * from that API version on (Azure). `none`: never asked.
   */
  ask: { kind: "stream_options"; since?: VersionSince } | { kind: "none" };
}

/**
 * What scopes a limit, beside the credential. The model's usual place is the flavour's
 * (providers/table.ts); `bodyRoutes` are the routes that name it in the body instead.
 */
export interface ScopeSpec {
  /** Paths (after the provider, and after Azure's resource) whose model is the body's `model`: OpenAI-compatible routes. */
  bodyRoutes?: RegExp;
  /** A limit is per resource too: the resource is in the key (Azure's, the first path segment). */
  resource?: boolean;
  /**
   * The end of a model's name its limits do not depend on (a version: Vertex's quotas hold per base
   * model, every version of it counting against one): taken off the key's model, so every version
   * shares one limiter. The ledger keeps the name as sent.
   */
  version?: RegExp;
  /**
   * A price depends on the resource too (Vertex: Claude from Sonnet 4.5 costs 10% more at a regional
   * or multi-region endpoint than at `global`): answers are priced as `<resource>/<model>`, which
   * `PRICES` may name, else as the model (usage/prices.ts, NAME_PARTS).
   */
  pricedByResource?: boolean;
}

/** The tiers a synchronous request may go at: half price and sheddable, the default, or dearer and faster. */
export const TIERS = ["flex", "standard", "priority"] as const;
export type Tier = (typeof TIERS)[number];

/** A tier's capacity refusal: a rule read only for an attempt sent at that tier. */
export type TierRefusal = RefusalRule & { tier: Tier };

/**
 * The service tiers a provider sells on its synchronous API (issue 35). A tier the row leaves
 * out of `values`, or a model `models` does not name, is not offered there: the request goes at
 * standard, never refused.
 */
export interface TierSpec {
  /** The body field a request names its tier in (the one the gateway writes). */
  field: string;
  /** Other spellings the provider takes for it (Gemini's REST API takes `serviceTier` too): read, and replaced when the gateway writes. */
  aliases?: readonly string[];
  /** The value the gateway writes for each tier it may ask for. */
  values: Partial<Record<Tier, string>>;
  /** The routes (after the provider) whose bodies take the field: writing it elsewhere (embeddings) would be refused. */
  routes: RegExp;
  /** The models that offer a tier, where not every one does. */
  models?: Partial<Record<Tier, RegExp>>;
  /** What the provider calls a tier, in a request or an answer (lowercase); a word that may be served at several, the dearest. */
  names: Readonly<Record<string, Tier>>;
  /** The dearest tier the provider may serve a request that names none (Anthropic's default is `auto`); absent: standard. */
  byDefault?: Tier;
  /** Where an answer tells the tier that served it: a header, and paths in its body or a stream event. */
  served: { header?: string; at: readonly (readonly string[])[] };
  /** A tier's capacity refusals, read after the row's own refusals and only for an attempt sent at that tier. */
  refusals: readonly TierRefusal[];
  /**
   * Tiers whose requests count against limits of their own (Groq's flex: ten times the on-demand
   * limits): they go to a limit key of their own. Every other tier counts in the key's windows.
   */
  own?: readonly Tier[];
  /**
   * A tier's price where PRICES gives none: a multiple of standard's, or `batch` (the model's
   * batch price: its own, else half). A tier absent here and there has no price: a budgeted key may
   * not ask for it, and an answer served at it is charged at standard's.
   */
  ratio: Partial<Record<Tier, number | "batch">>;
}

export interface Dialect {
  /** A header whose value names a refusal's error type (before a `:`), where the body does not (Bedrock's `x-amzn-errortype`). */
  errorTypeHeader?: string;
  /** Its name in the rows (set from its key there). */
  name: string;
  limits: LimitsSpec;
  refusals: readonly RefusalRule[];
  usage: UsageSpec;
  /** Absent: the flavour's model place, no resource. */
  scope?: ScopeSpec;
  /** The service tiers it sells, where it sells any. */
  tiers?: TierSpec;
}
