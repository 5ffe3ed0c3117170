// Options of the stand-in provider: defaults, validation, live merge.
// Every limit is per credential. A limit <= 0 means "unlimited" (no bucket, no headers for it).
import { type BedrockOptions, DEFAULT_BEDROCK, validateBedrock } from "./bedrock-options.ts";

/** How a 429 tells the caller when to come back. */
export type RetryAfterMode =
  | "exact" // retry-after: whole seconds until the request would pass (ceil)
  | "ms" // "exact" plus retry-after-ms with the exact milliseconds
  | "date" // retry-after as an HTTP-date (the moment, rounded up to the second)
  | "absent" // no retry-after at all
  | "long"; // retry-after: longRetryAfterSec, whatever the real wait is

/** "498": Groq's flex-tier capacity refusal, drawn only for requests that ask for `service_tier: "flex"`. */
export type FaultStatus = "498" | "500" | "503" | "524" | "529";

/** The limits one credential may have of its own (a pool member with a bigger or smaller plan). */
export const KEY_LIMIT_FIELDS = ["rpm", "tpm", "itpm", "otpm", "rpd", "monthlyTokens", "maxConcurrent", "burst"] as const;
export type KeyLimits = Partial<Pick<StandinOptions, (typeof KEY_LIMIT_FIELDS)[number]>>;

export interface StandinOptions {
  /** 0 lets the OS pick. */
  port: number;
  host: string;
  /** Requests per minute. */
  rpm: number;
  /** Tokens per minute; a request costs prompt tokens (chars/4) + its max output tokens. */
  tpm: number;
  /** Input tokens per minute (Anthropic's ITPM); null = same as tpm. */
  itpm: number | null;
  /** Output tokens per minute (Anthropic's OTPM, charged with max_tokens); null = same as tpm. */
  otpm: number | null;
  /** Requests per day (Groq's and Gemini's RPD), a bucket that holds the whole day; 0 = none. */
  rpd: number;
  /** Tokens per month (Mistral's monthly cap), charged like tpm; 0 = none. */
  monthlyTokens: number;
  /**
   * Bucket capacity. A number is a fraction of each per-minute limit (1 = a full minute's worth,
   * 0.1 = six seconds' worth); an object gives absolute capacities (missing ones stay a minute's).
   */
  burst: number | { requests?: number; tokens?: number };
  /** Requests in flight per credential beyond which the stand-in answers 429; 0 = no cap. */
  maxConcurrent: number;
  /** false: no rate-limit headers at all (the gateway must discover the limits by itself). */
  headers: boolean;
  retryAfter: RetryAfterMode;
  longRetryAfterSec: number;
  /** Time an accepted request takes, spread across the chunks of a stream. */
  latencyMs: number;
  /**
   * Time an accepted request waits before inference starts, its connection held open with the
   * dialect's keep-alive lines (DeepSeek: blank lines before a plain body, `: keep-alive` comments
   * before a stream's first chunk), one every keepAliveMs. Dialects without keep-alive just wait.
   */
  heldMs: number;
  keepAliveMs: number;
  /** Uniform extra latency in [0, jitterMs). */
  jitterMs: number;
  /** Number of content deltas in a stream. */
  streamChunks: number;
  /** Length of the reply in tokens (one word each), capped by the request's max tokens. */
  outputTokens: number;
  /** Fraction of accepted requests answered with that status instead, e.g. {"529": 0.1}. */
  faults: Partial<Record<FaultStatus, number>>;
  /** Seed of the PRNG behind faults and jitter; the same seed and request order give the same run. */
  seed: number;
  /**
   * Limits per credential, over the global ones for that credential only, e.g.
   * {"sk-a": {"rpm": 900}, "sk-b": {"rpm": 300}}. A change through configure replaces the whole map.
   */
  keyLimits: Record<string, KeyLimits>;
  /** Credentials that always get insufficient_quota (OpenAI 429) / credit balance too low (Anthropic 400). */
  quotaExhaustedKeys: string[];
  /** When set, any other credential gets 401 invalid key. */
  apiKeys: string[] | null;
  /** Reply with the text of the last user message instead of filler words. */
  echo: boolean;
  /** The models the account has; any other gets the API's 404 naming it. null: every model. */
  models: string[] | null;
  /** Organisation id used in error messages and headers. */
  organization: string;
  /** Attempts kept in the stats log (oldest dropped first). */
  logLimit: number;
  /**
   * Accepted requests wait, before their answer is made, until hold is turned off again
   * (configure): a test can have every request parked here, none in transit. A request whose
   * caller leaves while held is never answered, and its usage is not counted.
   */
  hold: boolean;
  /** Provider batches (`/v1/batches`, `/v1/messages/batches`): time from the end of validation until every line has ended; lines end evenly over it. */
  batchTurnaroundMs: number;
  /** How long a new batch is `validating` (OpenAI) before it runs or fails. */
  batchValidatingMs: number;
  /** How long a batch whose lines have all ended is `finalizing`, and a cancelled one `cancelling`. */
  batchFinalizingMs: number;
  /** The completion window: a batch still running this long after its creation expires (its lines not ended: expired). */
  batchExpireMs: number;
  /** Share of a batch's lines that fail at the provider (a 500 in the error file; Anthropic `errored`), drawn per line from the seed. */
  batchFailRate: number;
  /**
   * Tokens (prompt + output limit) an account's running batches of one model may hold: OpenAI
   * fails a batch past it at validation (`token_limit_exceeded`), Anthropic refuses it with a 429.
   * 0 = no limit.
   */
  batchEnqueuedTokens: number;
  /** Requests one batch may hold (OpenAI 50,000; Anthropic 100,000). */
  batchMaxRequests: number;
  /** Bytes one batch's input may hold (OpenAI's file, Anthropic's request body). */
  batchMaxBytes: number;
  /** Share of flex-tier requests the provider sheds with its own refusal (tiers.ts), drawn from the seed. */
  flexShed: number;
  /** The provider's own prices, USD per million tokens, per model, for its charge per tier (stats.tiers); a tier's own, else its published ratio. */
  prices: Record<string, TierPrice & { flex?: TierPrice; priority?: TierPrice }>;
  /** The stand-in Bedrock (bedrock.ts): its accounts, limits per account, region and model, faults. A change replaces the whole object. */
  bedrock: BedrockOptions;
  /** Seconds an access token from the Google token endpoint (google-oauth.ts) lives: Google's last 3599; a test sets a few to see tokens expire mid-run. */
  tokenLifetimeSec: number;
}

export interface TierPrice {
  input: number;
  output: number;
}

export const DEFAULT_OPTIONS: Readonly<StandinOptions> = Object.freeze({
  port: 0,
  host: "127.0.0.1",
  rpm: 500,
  tpm: 200_000,
  itpm: null,
  otpm: null,
  rpd: 0,
  monthlyTokens: 0,
  burst: 1,
  maxConcurrent: 0,
  headers: true,
  retryAfter: "exact",
  longRetryAfterSec: 3600,
  latencyMs: 20,
  heldMs: 0,
  keepAliveMs: 100,
  jitterMs: 0,
  streamChunks: 4,
  outputTokens: 12,
  faults: {},
  seed: 1,
  keyLimits: {},
  quotaExhaustedKeys: [],
  apiKeys: null,
  echo: false,
  models: null,
  organization: "org-standin",
  logLimit: 100_000,
  hold: false,
  batchTurnaroundMs: 3_000,
  batchValidatingMs: 200,
  batchFinalizingMs: 200,
  batchExpireMs: 86_400_000,
  batchFailRate: 0,
  batchEnqueuedTokens: 0,
  batchMaxRequests: 50_000,
  batchMaxBytes: 200 * 1024 * 1024,
  flexShed: 0,
  prices: {},
  bedrock: DEFAULT_BEDROCK,
  tokenLifetimeSec: 3599,
});

const RETRY_MODES: readonly string[] = ["exact", "ms", "date", "absent", "long"];
const FAULTS: readonly string[] = ["498", "500", "503", "524", "529"];
const NUMBERS = [
  "port", "rpm", "tpm", "rpd", "monthlyTokens", "heldMs", "keepAliveMs", "maxConcurrent", "longRetryAfterSec", "latencyMs", "jitterMs",
  "streamChunks", "outputTokens", "seed", "logLimit", "batchTurnaroundMs", "batchValidatingMs", "batchFinalizingMs",
  "batchExpireMs", "batchFailRate", "batchEnqueuedTokens", "batchMaxRequests", "batchMaxBytes", "flexShed", "tokenLifetimeSec",
] as const;

function fail(message: string): never {
  throw new Error(`standin options: ${message}`);
}

function isNumber(v: unknown): v is number {
  return typeof v === "number" && !Number.isNaN(v);
}

/** Checks a partial (from code or from POST /_config) and returns it typed; throws on bad input. */
export function validateOptions(input: unknown): Partial<StandinOptions> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) fail("expected an object");
  // undefined counts as absent, so `{ ...a, x: undefined }` from code is fine.
  const o = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  for (const key of Object.keys(o)) if (!(key in DEFAULT_OPTIONS)) fail(`unknown option "${key}"`);
  for (const key of NUMBERS) if (key in o && !isNumber(o[key])) fail(`${key} must be a number`);
  for (const key of ["itpm", "otpm"] as const) {
    if (key in o && o[key] !== null && !isNumber(o[key])) fail(`${key} must be a number or null`);
  }
  for (const key of ["headers", "echo", "hold"] as const) {
    if (key in o && typeof o[key] !== "boolean") fail(`${key} must be a boolean`);
  }
  for (const key of ["host", "organization"] as const) {
    if (key in o && typeof o[key] !== "string") fail(`${key} must be a string`);
  }
  if ("retryAfter" in o && !RETRY_MODES.includes(o.retryAfter as string)) {
    fail(`retryAfter must be one of ${RETRY_MODES.join(", ")}`);
  }
  if ("batchFailRate" in o && ((o.batchFailRate as number) < 0 || (o.batchFailRate as number) > 1)) fail("batchFailRate must be a rate in [0, 1]");
  if ("flexShed" in o && ((o.flexShed as number) < 0 || (o.flexShed as number) > 1)) fail("flexShed must be a rate in [0, 1]");
  if ("tokenLifetimeSec" in o && (o.tokenLifetimeSec as number) <= 0) fail("tokenLifetimeSec must be > 0");
  if ("prices" in o) validatePrices(o.prices);
  if ("bedrock" in o) o.bedrock = validateBedrock(o.bedrock);
  if ("burst" in o) validateBurst(o.burst);
  if ("keyLimits" in o) validateKeyLimits(o.keyLimits);
  if ("faults" in o) validateFaults(o.faults);
  if ("quotaExhaustedKeys" in o && !isStrings(o.quotaExhaustedKeys)) fail("quotaExhaustedKeys must be strings");
  if ("apiKeys" in o && o.apiKeys !== null && !isStrings(o.apiKeys)) fail("apiKeys must be strings or null");
  if ("models" in o && o.models !== null && !isStrings(o.models)) fail("models must be strings or null");
  return o as Partial<StandinOptions>;
}

const isPrice = (p: unknown): boolean => typeof p === "object" && p !== null && isNumber((p as TierPrice).input) && isNumber((p as TierPrice).output);

function validatePrices(p: unknown): void {
  if (typeof p !== "object" || p === null || Array.isArray(p)) fail("prices must be an object of model to {input, output, flex?, priority?}");
  for (const [model, v] of Object.entries(p)) {
    const tiers = v as { flex?: unknown; priority?: unknown };
    if (!isPrice(v) || (tiers.flex !== undefined && !isPrice(tiers.flex)) || (tiers.priority !== undefined && !isPrice(tiers.priority)))
      fail(`prices["${model}"] must be {input, output} in USD per million tokens, optionally flex and priority of the same shape`);
  }
}

function isStrings(v: unknown): boolean {
  return Array.isArray(v) && v.every((s) => typeof s === "string");
}

function validateBurst(b: unknown): void {
  if (isNumber(b)) {
    if (b <= 0) fail("burst fraction must be > 0");
    return;
  }
  if (typeof b !== "object" || b === null) fail("burst must be a fraction or {requests, tokens}");
  for (const [k, v] of Object.entries(b)) {
    if (k !== "requests" && k !== "tokens") fail(`unknown burst field "${k}"`);
    if (!isNumber(v) || v <= 0) fail(`burst.${k} must be a positive number`);
  }
}

function validateKeyLimits(k: unknown): void {
  if (typeof k !== "object" || k === null || Array.isArray(k)) fail("keyLimits must be an object of credential to limits");
  for (const [credential, limits] of Object.entries(k)) {
    if (typeof limits !== "object" || limits === null || Array.isArray(limits)) fail(`keyLimits["${credential}"] must be an object`);
    for (const field of Object.keys(limits)) {
      if (!(KEY_LIMIT_FIELDS as readonly string[]).includes(field)) {
        fail(`keyLimits["${credential}"]: unknown field "${field}" (use ${KEY_LIMIT_FIELDS.join(", ")})`);
      }
    }
    try {
      validateOptions(limits);
    } catch (e) {
      fail(`keyLimits["${credential}"]: ${(e as Error).message.replace(/^standin options: /, "")}`);
    }
  }
}

/** The options as one credential sees them: the global ones with its keyLimits over them. */
export function forCredential(o: StandinOptions, credential: string): StandinOptions {
  const own = o.keyLimits[credential];
  return own ? { ...o, ...own } : o;
}

function validateFaults(f: unknown): void {
  if (typeof f !== "object" || f === null || Array.isArray(f)) fail("faults must be an object");
  let sum = 0;
  for (const [k, v] of Object.entries(f)) {
    if (!FAULTS.includes(k)) fail(`faults: unsupported status ${k} (use ${FAULTS.join(", ")})`);
    if (!isNumber(v) || v < 0 || v > 1) fail(`faults.${k} must be a rate in [0, 1]`);
    sum += v;
  }
  if (sum > 1) fail("fault rates add up to more than 1");
}

/** Defaults, then each partial in order; every partial is validated. */
export function mergeOptions(...partials: (Partial<StandinOptions> | undefined)[]): StandinOptions {
  let out: StandinOptions = { ...DEFAULT_OPTIONS, faults: {}, keyLimits: {}, quotaExhaustedKeys: [] };
  for (const p of partials) if (p) out = { ...out, ...validateOptions(p) };
  return out;
}
