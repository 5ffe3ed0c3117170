/**
 * @module Draft data for the Bedrock row (issue 41), not registered anywhere: what the row format
 * of issue 40 will need to carry for Amazon Bedrock's runtime, each fact with its source. The
 * building blocks it names: providers/auth/sigv4.ts (signing), providers/auth/sigv4-verify.ts (a
 * caller's signature made with a virtual key), usage/eventstream.ts and usage/bedrock.ts (usage).
 *
 * How each client reaches a gateway with only its base URL and key changed (run against the
 * stand-in: test/node/standin.bedrock.test.ts, test/node/standin-bedrock-helpers.ts):
 * - @aws-sdk/client-bedrock-runtime: `endpoint: "https://<gateway>/bedrock/<region>"`. Bearer:
 *   `token: { token: "sgk-..." }, authSchemePreference: ["httpBearerAuth"]`, or the environment's
 *   AWS_BEARER_TOKEN_BEDROCK (which also sets the preference); a `token` without the preference
 *   still signs (and fails with no AWS credentials). SigV4: `credentials: { accessKeyId, secretAccessKey }`
 *   signed for the gateway's host, which the gateway can verify (sigv4-verify.ts) when the secret is
 *   the virtual key, never forward. Its Node default handler is HTTP/2 (fine over TLS; a plain
 *   http:// gateway needs `requestHandler: new NodeHttpHandler()`).
 * - @anthropic-ai/bedrock-sdk: `baseURL`, `apiKey: "sgk-..."` (sent `Authorization: Bearer`);
 *   or `awsAccessKey`/`awsSecretKey` (SigV4, as above); `skipAuth: true` sends no credential (a
 *   virtual key in a header of the caller's choosing via `defaultHeaders`). It signs its
 *   x-stainless-* headers too, and leaves the model id's ":" unencoded in the path.
 * - @ai-sdk/amazon-bedrock: `baseURL`, `apiKey: "sgk-..."` (bearer) or `accessKeyId`/`secretAccessKey`
 *   (aws4fetch: signs host and x-amz-date only, no x-amz-content-sha256).
 * A caller's own Bedrock API key can pass through (a bearer token names no host). A caller's own
 * SigV4 signature cannot: it covers the host (the gateway's) and the path (with the gateway's
 * prefix), so AWS would recompute it over bedrock-runtime.<region>.amazonaws.com and refuse it;
 * re-signing needs the secret, which the caller never sends. Such callers sign with the virtual
 * key, and the gateway signs again with a member's credentials.
 */

/** How a pool member authenticates; the gateway signs (SigV4) or sends the key (bearer) per attempt. */
export const CREDENTIALS = {
  /** IAM credentials: SigV4 with signing name `bedrock` for the member's region. An STS session token rides as x-amz-security-token. */
  sigv4: { secrets: ["accessKeyId", "secretAccessKey"], optional: ["sessionToken"], needs: ["region", "account"], service: "bedrock" },
  /** A Bedrock API key (long-term `ABSK...`, short-term `bedrock-api-key-...`), `Authorization: Bearer` (userguide/api-keys.html; a short-term key works in its own region only). */
  apiKey: { secrets: ["apiKey"], needs: ["region", "account"], header: "authorization", scheme: "Bearer" },
} as const;

/** The runtime's host per region (docs.aws.amazon.com/general/latest/gr/bedrock.html); the partitions' DNS suffixes as the AI SDK's provider lists them. */
export function hostOf(region: string): string {
  const suffix = region.startsWith("cn-") ? "amazonaws.com.cn" : region.startsWith("eusc-") ? "amazonaws.eu" : "amazonaws.com";
  return `https://bedrock-runtime.${region}.${suffix}`;
}

export type Framing = "json" | "eventstream" | "sse";

/** The runtime's routes (APIReference, API_Operations_Amazon_Bedrock_Runtime): where the model is, how the answer is framed, where its usage is. */
export const ROUTES = [
  { path: /^\/model\/([^/]+)\/invoke$/, op: "InvokeModel", model: "path", framing: "json", usage: ["body: the model's own (Claude's usage)", "headers: x-amzn-bedrock-{input,output}-token-count"] },
  { path: /^\/model\/([^/]+)\/invoke-with-response-stream$/, op: "InvokeModelWithResponseStream", model: "path", framing: "eventstream", usage: ["chunk: the model's own events", "last chunk: amazon-bedrock-invocationMetrics"] },
  { path: /^\/model\/([^/]+)\/converse$/, op: "Converse", model: "path", framing: "json", usage: ["body: usage {inputTokens, outputTokens, cacheReadInputTokens, cacheWriteInputTokens}"] },
  { path: /^\/model\/([^/]+)\/converse-stream$/, op: "ConverseStream", model: "path", framing: "eventstream", usage: ["metadata event: usage"] },
  // OpenAI-compatible (userguide/inference-chat-completions.html): OpenAI's body and usage; a stream's usage when asked (stream_options).
  { path: /^\/openai\/v1\/chat\/completions$/, op: "ChatCompletions", model: "body.model", framing: "json", usage: ["body: usage (OpenAI's)"] },
] as const;

/** The model a path names, URL-decoded: a base model id, an inference profile id (`us.`, `eu.`, `global.` ...) or an ARN. */
export const modelOfPath = (path: string): string | null => {
  const m = /^\/model\/([^/]+)\//.exec(path);
  return m ? decodeURIComponent(m[1]!) : null;
};

/**
 * What scopes a limit: the account, the region and the model or inference profile. Quotas are per
 * account, region and model, a cross-region profile's apart from its base model's
 * (userguide/quotas.html, "Cross-region model inference requests per minute for ..."). An ARN
 * counts as the resource it names. Never a credential's hash: an account's members, keys and
 * rotating session tokens share its quota; two regions are two keys.
 */
export function limitScope(account: string, region: string, model: string): string {
  return `bedrock:${account}:${region}:${resourceOf(model)}`;
}

/** The model or profile an ARN names (`...:inference-profile/us.anthropic...` is `us.anthropic...`); any other id as it is. */
export function resourceOf(model: string): string {
  const arn = /^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:(?:foundation-model|inference-profile|application-inference-profile|provisioned-model)\/(.+)$/.exec(model);
  return arn ? arn[1]! : model;
}

/**
 * What a request costs against its tokens-per-minute quota (userguide/quotas-runtime.html: input
 * and output together, per model and region, one quota for InvokeModel, Converse and chat
 * completions alike; a cross-region profile's quota apart from the in-region one; a day's tokens
 * per model and across models besides). Reserved when it starts: its input (the cache's reads and
 * writes included) plus its output limit (`max_tokens`, `inferenceConfig.maxTokens`; absent: the
 * model's maximum), settled to what it used when it ends (AWS's aws/agent-toolkit-for-aws,
 * `quota-health.md`). Output counts `outputBurndown` times (userguide/quotas.html, "token burndown
 * rate", as third parties quote it): a gateway pacing a Claude 4 key must count its output so.
 */
export function outputBurndown(model: string): number {
  return /anthropic\.claude-(3-7-sonnet|(opus|sonnet|haiku)-4)/.test(resourceOf(model)) ? 5 : 1;
}

export type Meaning = "rate_limit" | "hard_quota" | "transient" | "fatal" | "bad_key";

/**
 * Refusals by error type: `x-amzn-errortype` before its ":" (streams: `:exception-type`, the same
 * names in camelCase). Statuses: the API's Smithy model as @aws-sdk/client-bedrock-runtime carries
 * it. No rate-limit headers, ever: a window is learned from ThrottlingException alone, whose message
 * says which ("Too many requests, ..." requests; "Too many tokens, ..." tokens; "Too many tokens
 * per day, ..." a day's cap: repost.aws/knowledge-center/bedrock-throttling-error, third-party reports).
 */
export const REFUSALS: Record<string, { status: number; meaning: Meaning }> = {
  ThrottlingException: { status: 429, meaning: "rate_limit" },
  /** The SDKs retry it (up to 5 times): capacity, not the account's quota. */
  ModelNotReadyException: { status: 429, meaning: "transient" },
  ServiceUnavailableException: { status: 503, meaning: "transient" },
  InternalServerException: { status: 500, meaning: "transient" },
  ModelTimeoutException: { status: 408, meaning: "transient" },
  ServiceQuotaExceededException: { status: 400, meaning: "hard_quota" },
  ValidationException: { status: 400, meaning: "fatal" },
  ModelErrorException: { status: 424, meaning: "fatal" },
  ResourceNotFoundException: { status: 404, meaning: "fatal" },
  /** The member may not use this model (IAM, model access), or its bearer key is not valid (observed, third party): it cannot serve; never a rate limit. */
  AccessDeniedException: { status: 403, meaning: "bad_key" },
  /** SigV4's names (IAM user guide, reference_sigv-troubleshooting); bedrock-runtime sends InvalidSignatureException. */
  SignatureDoesNotMatch: { status: 403, meaning: "bad_key" },
  InvalidSignatureException: { status: 403, meaning: "bad_key" },
  IncompleteSignature: { status: 403, meaning: "bad_key" },
  UnrecognizedClientException: { status: 403, meaning: "bad_key" },
  InvalidClientTokenId: { status: 403, meaning: "bad_key" },
  ExpiredTokenException: { status: 403, meaning: "bad_key" },
  MissingAuthenticationTokenException: { status: 403, meaning: "bad_key" },
};

/** The error type of a refusal: `ThrottlingException:http://internal.amazon.com/coral/...` is ThrottlingException. */
export const errorType = (h: Headers): string | null => h.get("x-amzn-errortype")?.split(":")[0] ?? null;

/**
 * A Claude request moved between Anthropic's API and InvokeModel (model-parameters-anthropic-claude-messages):
 * the body loses `model` and `stream` (the path says them), gains `anthropic_version:
 * "bedrock-2023-05-31"`, and `anthropic-beta` moves into `anthropic_beta` (an array).
 */
export const ANTHROPIC_VERSION = "bedrock-2023-05-31";

/** USD per million tokens (`cached`: a cache read, `cacheWrite`: a 5-minute cache write), the most output a call may ask, the context window. */
export interface ModelRow {
  input: number;
  output: number;
  cached?: number;
  cacheWrite?: number;
  maxOutput: number;
  context: number;
}

/**
 * On-demand prices, standard tier (aws.amazon.com/bedrock/pricing/, read 2026-11-28: its per-model
 * tables load in the browser and were read as third parties quote them, e.g. clauder-navi.com and
 * tokenmix.ai; Claude's match Anthropic's own list prices). Windows and output caps: each model's
 * card (userguide/model-card-*.html); read for Haiku 4.5 (200K, 64K), Llama 4 Maverick (1M, 8K),
 * Llama 3.1 405B (128K, 4K), Nova Lite (300K, 5K); the rest from Anthropic's model overview and
 * Meta's and Amazon's own cards, to be checked against Bedrock's before the row ships.
 * Keys are base model ids; an inference profile (`global.`, `us.`, `eu.`, `jp.`, `apac.`, ...)
 * is priced by priceOf below.
 */
export const MODELS: Record<string, ModelRow> = {
  "anthropic.claude-opus-4-5-20251101-v1:0": { input: 5, output: 25, cached: 0.5, cacheWrite: 6.25, maxOutput: 64_000, context: 200_000 },
  "anthropic.claude-sonnet-4-5-20250929-v1:0": { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75, maxOutput: 64_000, context: 200_000 },
  "anthropic.claude-haiku-4-5-20251001-v1:0": { input: 1, output: 5, cached: 0.1, cacheWrite: 1.25, maxOutput: 64_000, context: 200_000 },
  "anthropic.claude-opus-4-1-20250805-v1:0": { input: 15, output: 75, cached: 1.5, cacheWrite: 18.75, maxOutput: 32_000, context: 200_000 },
  "anthropic.claude-opus-4-20250514-v1:0": { input: 15, output: 75, cached: 1.5, cacheWrite: 18.75, maxOutput: 32_000, context: 200_000 },
  "anthropic.claude-sonnet-4-20250514-v1:0": { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75, maxOutput: 64_000, context: 200_000 },
  "anthropic.claude-3-7-sonnet-20250219-v1:0": { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75, maxOutput: 64_000, context: 200_000 },
  "anthropic.claude-3-5-haiku-20241022-v1:0": { input: 0.8, output: 4, cached: 0.08, cacheWrite: 1, maxOutput: 8_192, context: 200_000 },
  "meta.llama4-maverick-17b-instruct-v1:0": { input: 0.24, output: 0.97, maxOutput: 8_192, context: 1_000_000 },
  "meta.llama4-scout-17b-instruct-v1:0": { input: 0.17, output: 0.66, maxOutput: 8_192, context: 3_500_000 },
  "meta.llama3-3-70b-instruct-v1:0": { input: 0.72, output: 0.72, maxOutput: 8_192, context: 128_000 },
  "meta.llama3-1-405b-instruct-v1:0": { input: 2.4, output: 2.4, maxOutput: 4_096, context: 128_000 },
  "meta.llama3-1-70b-instruct-v1:0": { input: 0.72, output: 0.72, maxOutput: 2_048, context: 128_000 },
  "meta.llama3-1-8b-instruct-v1:0": { input: 0.22, output: 0.22, maxOutput: 2_048, context: 128_000 },
  "amazon.nova-pro-v1:0": { input: 0.8, output: 3.2, cached: 0.2, maxOutput: 5_000, context: 300_000 },
  "amazon.nova-lite-v1:0": { input: 0.06, output: 0.24, cached: 0.015, maxOutput: 5_000, context: 300_000 },
  "amazon.nova-micro-v1:0": { input: 0.035, output: 0.14, cached: 0.00875, maxOutput: 5_000, context: 128_000 },
};

/**
 * Claude models from 4.5 on cost 10% more through a regional or geographic profile (`us.`, `eu.`,
 * ...) or in-region than through `global.` (AWS's and Anthropic's announcement of Sonnet 4.5 on
 * Bedrock; third-party price pages agree). Other models: the same everywhere.
 */
const REGIONAL_PREMIUM = /^anthropic\.claude-(opus|sonnet|haiku)-4-5-/;

/** The row of a model id, a profile id or an ARN naming one; null for a model this table does not price. */
export function priceOf(model: string): ModelRow | null {
  const id = resourceOf(model);
  const profile = /^(global|us|us-gov|eu|apac|jp|au|ca)\./.exec(id)?.[1] ?? null;
  const base = profile ? id.slice(profile.length + 1) : id;
  const row = MODELS[base];
  if (!row) return null;
  if (profile === "global" || !REGIONAL_PREMIUM.test(base)) return row;
  const up = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 1.1 * 1e6) / 1e6);
  return { ...row, input: up(row.input)!, output: up(row.output)!, cached: up(row.cached), cacheWrite: up(row.cacheWrite) };
}
