// The stand-in Bedrock's options (`bedrock` in StandinOptions): its accounts and their credentials,
// the region of unprefixed paths, limits per account, region and model, and faults on demand.

/** An IAM access key: what SigV4 signs with. A session token, when set, must come with it. */
export interface BedrockAccessKey {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockAccount {
  /** The 12-digit AWS account id. */
  id: string;
  keys: BedrockAccessKey[];
  /** Bedrock API keys (bearer): long-term ones start `ABSK`, short-term ones `bedrock-api-key-` (userguide/api-keys.html). */
  apiKeys: string[];
}

/** Requests and tokens (input + output) per minute; <= 0 or absent: the stand-in's global rpm/tpm. */
export interface BedrockLimit {
  rpm?: number;
  tpm?: number;
}

/** Refusals Bedrock answers a request with before any inference (their statuses: the AWS SDK's model of the API). */
export type BedrockFault = "ServiceUnavailableException" | "ModelNotReadyException" | "ModelErrorException" | "ValidationException" | "InternalServerException" | "ModelTimeoutException";
/** Exception events a stream may end with after it started (API_runtime_ResponseStream, API_runtime_ConverseStreamOutput). */
export type BedrockStreamFault = "throttlingException" | "modelStreamErrorException" | "internalServerException" | "serviceUnavailableException";

export interface BedrockOptions {
  accounts: BedrockAccount[];
  /** The region of a path without `/bedrock/<region>` (each region is its own host at AWS). */
  region: string;
  /**
   * Limits, the most specific key first: `<account>/<region>/<model>`, `<region>/<model>`,
   * `<model>`, `*`. A model is the id the path names, an ARN's resource id taken out of it (an
   * inference profile `us.anthropic...` has quotas of its own, apart from its base model).
   */
  limits: Record<string, BedrockLimit>;
  /** Share of accepted requests refused with each fault, drawn from the seed. */
  faults: Partial<Record<BedrockFault, number>>;
  /** Share of streams that end with each exception event after their first events. */
  streamFaults: Partial<Record<BedrockStreamFault, number>>;
}

export const BEDROCK_FAULTS: readonly BedrockFault[] = ["ServiceUnavailableException", "ModelNotReadyException", "ModelErrorException", "ValidationException", "InternalServerException", "ModelTimeoutException"];
export const BEDROCK_STREAM_FAULTS: readonly BedrockStreamFault[] = ["throttlingException", "modelStreamErrorException", "internalServerException", "serviceUnavailableException"];

/** One account, with AWS's documentation example key (IAM user guide) and a long-term API key. */
export const DEFAULT_BEDROCK: Readonly<BedrockOptions> = Object.freeze({
  accounts: [{ id: "111122223333", keys: [{ accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" }], apiKeys: ["ABSKQmVkcm9ja0FQSUtleS1zdGFuZGluLWV4YW1wbGU="] }],
  region: "us-east-1",
  limits: {},
  faults: {},
  streamFaults: {},
});

function fail(message: string): never {
  throw new Error(`standin options: bedrock.${message}`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === "string");

function rates(v: unknown, names: readonly string[], field: string): void {
  if (!isObject(v)) fail(`${field} must be an object of name to rate`);
  let sum = 0;
  for (const [k, r] of Object.entries(v)) {
    if (!names.includes(k)) fail(`${field}: unknown ${k} (use ${names.join(", ")})`);
    if (typeof r !== "number" || !(r >= 0 && r <= 1)) fail(`${field}.${k} must be a rate in [0, 1]`);
    sum += r;
  }
  if (sum > 1) fail(`${field} add up to more than 1`);
}

/** Checks a whole `bedrock` option (from code or POST /_config); its missing fields take the defaults. */
export function validateBedrock(input: unknown): BedrockOptions {
  if (!isObject(input)) fail("must be an object");
  const o = { ...DEFAULT_BEDROCK, ...input } as BedrockOptions;
  if (!Array.isArray(o.accounts)) fail("accounts must be an array");
  for (const a of o.accounts) {
    if (!isObject(a) || typeof a.id !== "string") fail("accounts[] need an id");
    if (!Array.isArray(a.keys) || !a.keys.every((k) => isObject(k) && typeof k.accessKeyId === "string" && typeof k.secretAccessKey === "string")) fail(`accounts[${a.id}].keys need accessKeyId and secretAccessKey`);
    if (!strings(a.apiKeys)) fail(`accounts[${a.id}].apiKeys must be strings`);
  }
  if (typeof o.region !== "string" || !/^[a-z]{2}(-[a-z]+)+-\d$/.test(o.region)) fail("region must be a region name (us-east-1)");
  if (!isObject(o.limits)) fail("limits must be an object");
  for (const [k, l] of Object.entries(o.limits)) {
    if (!isObject(l) || Object.keys(l).some((f) => f !== "rpm" && f !== "tpm") || Object.values(l).some((x) => typeof x !== "number")) fail(`limits["${k}"] must be {rpm?, tpm?}`);
  }
  rates(o.faults, BEDROCK_FAULTS, "faults");
  rates(o.streamFaults, BEDROCK_STREAM_FAULTS, "streamFaults");
  return o;
}

/** The limit that holds for one account, region and model. */
export function limitFor(o: BedrockOptions, account: string, region: string, model: string): BedrockLimit {
  for (const k of [`${account}/${region}/${model}`, `${region}/${model}`, model, "*"]) if (Object.hasOwn(o.limits, k)) return o.limits[k]!;
  return {};
}

/** How many quota tokens one output token costs: 5 for Claude 3.7 Sonnet and the Claude 4 family ("token burndown rate"), else 1. */
export function outputBurndown(model: string): number {
  return /anthropic\.claude-(3-7-sonnet|(opus|sonnet|haiku)-4)/.test(model) ? 5 : 1;
}

/**
 * The most a model answers, which Bedrock reserves for a request that names no output limit
 * (AWS's own samples; see bedrock.ts): Anthropic's models overview gives Claude Opus 4 and 4.1
 * 32,000, 3.7 Sonnet and the rest of the Claude 4 family 64,000, 3.5 Haiku 8,192, Claude 3 4,096;
 * Meta's Llama 3 takes `max_gen_len` up to 2,048 (userguide/model-parameters-meta). Null for a model
 * this stand-in does not know: its `outputTokens` then.
 */
const MAX_OUTPUT: readonly [RegExp, number][] = [
  [/anthropic\.claude-opus-4-(?:1-)?\d{8}/, 32_000],
  [/anthropic\.claude-(?:3-7-sonnet|(?:opus|sonnet|haiku)-4)/, 64_000],
  [/anthropic\.claude-3-5-haiku/, 8_192],
  [/anthropic\.claude-3-/, 4_096],
  [/meta\.llama3/, 2_048],
];
export const maxOutputOf = (model: string): number | null => MAX_OUTPUT.find(([re]) => re.test(model))?.[1] ?? null;
