/**
 * @module The provider table: the API families (flavours) a provider speaks, one row each, and
 * the built-in providers, each a base URL plus a flavour and a dialect. Adding a provider is
 * adding a row, not a class. Column types in flavour.ts.
 */
import { POOLS_NAME } from "./address";
import { FILE_BATCHES, INLINE_BATCHES } from "./batches";
import type { DialectName } from "./dialects";
import type { Flavour } from "./flavour";
import type { QuotaSpec } from "./quota";
import { ANTHROPIC_PRICING, GEMINI_PRICING, OPENAI_PRICING, VERTEX_PRICING } from "./prices";

/** The header most families read a credential from. */
const AUTHORIZATION = "authorization";
/** An AWS region's name (us-east-1, ap-southeast-2, us-gov-west-1). */
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;
/** A Google Cloud project id (cloud.google.com/resource-manager/docs/creating-managing-projects: 6-30 characters; longer ones are still read). */
const PROJECT = String.raw`[a-z][a-z0-9-]{4,61}[a-z0-9]`;
/** A Google Cloud location's name (us-east5, europe-west4, global, us). */
const LOCATION = /^[a-z][a-z0-9-]{0,38}[a-z0-9]$/;
/** OpenAI's org and project scoping: part of a credential's key, and whose account answered. */
const OPENAI_SCOPE = ["openai-organization", "openai-project"];
/** OpenAI's wire, which Azure OpenAI speaks too: its rate-limit headers and its streams' last events. */
const OPENAI_QUOTA = ["x-ratelimit-"];
const OPENAI_STREAM_ENDS = ["data: [DONE]", "response.completed"];

const ROWS = {
  /**
   * platform.openai.com/docs/api-reference/authentication: `Authorization: Bearer`, and
   * `OpenAI-Organization` / `OpenAI-Project` scoping it; answers tell `x-ratelimit-*`, the org
   * (`openai-organization`) and `openai-processing-ms`; `OpenAI-Beta` asks for beta features.
   */
  openai: {
    title: "OpenAI",
    credentialHeaders: [AUTHORIZATION], scopeHeaders: OPENAI_SCOPE,
    send: { header: AUTHORIZATION, scheme: "Bearer" },
    model: "body",
    compatible: ["openai", "azure"],
    headers: { quota: OPENAI_QUOTA, account: OPENAI_SCOPE, timing: ["openai-processing-ms"], semantic: ["openai-beta"] },
    streamEnds: OPENAI_STREAM_ENDS,
    pricing: OPENAI_PRICING,
    batches: FILE_BATCHES,
  },
  /**
   * docs.anthropic.com/en/api/overview: `x-api-key` and an `anthropic-version` on every request
   * (2023-06-01, the current one), `anthropic-beta` for betas; answers tell
   * `anthropic-ratelimit-*` and `anthropic-organization-id`.
   */
  anthropic: {
    title: "Anthropic",
    credentialHeaders: ["x-api-key", AUTHORIZATION],
    send: { header: "x-api-key" },
    fixed: { "anthropic-version": "2023-06-01" },
    model: "body",
    // Claude on Bedrock's InvokeModel and Vertex's rawPredict: the same wire (their rows' `wires`).
    compatible: ["anthropic", "bedrock", "vertex"],
    headers: { quota: ["anthropic-ratelimit-"], account: ["anthropic-organization-id"], semantic: ["anthropic-beta", "anthropic-version"] },
    streamEnds: ["event: message_stop", '"type":"message_stop"'],
    pricing: ANTHROPIC_PRICING,
    batches: INLINE_BATCHES,
  },
  /**
   * ai.google.dev/gemini-api/docs/api-key: `x-goog-api-key` (or `?key=`), `x-goog-user-project`
   * billing a project; `X-Goog-FieldMask` chooses the answer's fields (Google's system
   * parameters). An uploaded file is `files/<id>`, or that on the API's host (/docs/files).
   */
  gemini: {
    title: "Gemini",
    credentialHeaders: ["x-goog-api-key", AUTHORIZATION], credentialParams: ["key"], scopeHeaders: ["x-goog-user-project"],
    send: { header: "x-goog-api-key" },
    model: "gemini-path",
    headers: { semantic: ["x-goog-fieldmask"] },
    streamEnds: ['"finishReason"'],
    pricing: GEMINI_PRICING,
    fileUri: /^(?:https:\/\/generativelanguage\.googleapis\.com\/[^/]+\/)?files\/[^/]+$/,
  },
  /**
   * learn.microsoft.com/azure/ai-foundry/openai/reference: `api-key` (or a bearer token), a
   * resource per host, a deployment per model in the path, an `api-version` in the query
   * (2024-10-21: the GA version the gateway sends by default). Answers tell `x-ratelimit-*`
   * and the front's own `x-ms-*`, `azureml-*` and `apim-request-id`, which name a region,
   * deployment or session. The same API as OpenAI's: the same pricing.
   */
  azure: {
    title: "Azure OpenAI",
    credentialHeaders: ["api-key", AUTHORIZATION],
    send: { header: "api-key" },
    model: "azure-path",
    compatible: ["azure", "openai"],
    member: {
      fields: {
        resource: { check: /^[a-z0-9][a-z0-9-]{0,62}$/i, says: "the Azure resource's name", resource: true },
        deployments: { kind: "models", check: POOLS_NAME, says: "map model names to deployment names", each: "a deployment name" },
        apiVersion: { check: /^[0-9a-z.-]{1,32}$/i, says: "an api-version", default: "2024-10-21" },
      },
      // `/v1/chat/completions` is `/openai/deployments/<name>/chat/completions?api-version=` there.
      path: { from: /^(?:\/v1(?=\/))?(?<rest>.*)$/s, to: "/openai/deployments/{model}{rest}" },
      query: { "api-version": "{apiVersion}" },
    },
    headers: { quota: OPENAI_QUOTA, member: ["x-ms-", "azureml-", "apim-request-id"] },
    streamEnds: OPENAI_STREAM_ENDS,
    pricing: OPENAI_PRICING,
  },
  /**
   * Amazon Bedrock's runtime (docs.aws.amazon.com/bedrock/latest/APIReference/): a host per region
   * (`bedrock-runtime.<region>.amazonaws.com`: the gateway's path names it first,
   * `/bedrock/<region>/...`), the model in the path (`/model/<id>/converse`, a base model id, an
   * inference profile id or an ARN, URL-encoded), requests signed with SigV4 (signing name
   * `bedrock`; IAM user guide, reference_sigv) or a Bedrock API key as a bearer token
   * (userguide/api-keys.html). Quotas per account, region and model (userguide/quotas.html): a
   * member names its account. Claude through Anthropic's Messages API is InvokeModel with
   * `anthropic_version: "bedrock-2023-05-31"`, the model and a stream in the path, betas in
   * `anthropic_beta` (userguide/model-parameters-anthropic-claude-messages.html); a stream comes
   * in event-stream frames (`application/vnd.amazon.eventstream`).
   */
  bedrock: {
    title: "Amazon Bedrock",
    credentialHeaders: [AUTHORIZATION],
    send: [{ kind: "sigv4", service: "bedrock", secrets: ["accessKeyId", "secretAccessKey"], optional: ["sessionToken"] }, { header: AUTHORIZATION, scheme: "Bearer" }],
    model: "bedrock-path",
    host: { from: /^\/([a-z]{2}(?:-[a-z]+)+-\d{1,2})(?=\/|$)/, strip: true, check: REGION },
    member: {
      fields: {
        region: { check: REGION, says: "an AWS region (us-east-1)", resource: true },
        account: { check: /^[A-Za-z0-9._-]{1,64}$/, says: "the AWS account's id (its quotas are the account's)", identity: true },
        models: { kind: "models", check: /^[A-Za-z0-9.:@_/-]{1,256}$/, says: "map model names to Bedrock model or inference profile ids", each: "a Bedrock model id", optional: true },
      },
      path: [
        { from: /^\/[^/]+\/model\/(?<model>[^/]+)\/(?<op>invoke|invoke-with-response-stream|converse|converse-stream|count-tokens)$/, to: "/model/{model}/{op}" },
        { from: /^\/[^/]+(?<rest>\/openai\/v1\/chat\/completions)$/, to: "{rest}" },
      ],
      query: {},
    },
    wires: {
      anthropic: {
        from: /^\/v1\/messages$/, path: "/model/{model}/invoke", streamPath: "/model/{model}/invoke-with-response-stream",
        drop: ["model", "stream"], set: { anthropic_version: "bedrock-2023-05-31" }, headersToBody: { "anthropic-beta": "anthropic_beta" }, stream: "eventstream",
        // A stream's exception events (APIReference API_runtime_ResponseStream) as Anthropic's error types (docs.claude.com/en/api/errors).
        exceptions: { throttlingException: "rate_limit_error", serviceUnavailableException: "overloaded_error", validationException: "invalid_request_error" },
      },
    },
    headers: { member: ["x-amzn-requestid", "x-amz-apigw-id", "x-amzn-trace-id"] },
    // Its streams are binary frames (their events base64 in chunks): none is ever taken as whole, so none is cached.
    streamEnds: [],
    pricing: { counts: /\/count-tokens$/, toolFees: /^$/, perUse: [] },
  },
  /**
   * Google Vertex AI (cloud.google.com/vertex-ai/generative-ai/docs): a host per location
   * (`<location>-aiplatform.googleapis.com`, `aiplatform.googleapis.com` for `global`), the
   * project, location and model in the path (`/v1/projects/<p>/locations/<l>/publishers/
   * {anthropic,google}/models/<m>:<verb>`; express mode's `/v1/publishers/google/...` with an API
   * key), a bearer access token (an hour's, minted from a service account key:
   * developers.google.com/identity/protocols/oauth2/service-account). Quotas per project, region
   * and base model: a member names its project. Claude through Anthropic's Messages API is
   * rawPredict with `anthropic_version: "vertex-2023-10-16"` and the model in the path
   * (/partner-models/claude); its streams are Anthropic's server-sent events.
   */
  vertex: {
    title: "Google Vertex AI",
    // Google's APIs also take a token or an API key as a query parameter, and a quota project in a
    // header (cloud.google.com/apis/docs/system-parameters): all in the credential's hash.
    credentialHeaders: [AUTHORIZATION, "x-goog-api-key"], credentialParams: ["key", "access_token"], scopeHeaders: ["x-goog-user-project"],
    send: { kind: "service-account" },
    model: "gemini-path",
    // Hosts by location (/docs/learn/locations): `global` at aiplatform.googleapis.com, the `us`
    // and `eu` multi-regions at aiplatform.{us,eu}.rep.googleapis.com (the same three rules in
    // @anthropic-ai/vertex-sdk's client.ts and @google/genai's ApiClient); express mode's path
    // names no location and is served by the global endpoint (/docs/start/express-mode).
    host: {
      from: /\/locations\/([^/]+)\//, strip: false, check: LOCATION, otherwise: "global",
      hosts: { global: ["{resource}-aiplatform.", "aiplatform."], us: ["{resource}-aiplatform.", "aiplatform.us.rep."], eu: ["{resource}-aiplatform.", "aiplatform.eu.rep."] },
    },
    // Quotas per project, location and base model (/docs/quotas): a caller's own token is keyed by its path's project once proven there.
    identity: new RegExp(`^/v1(?:beta1)?/projects/(${PROJECT})/locations/`),
    member: {
      fields: {
        project: { check: new RegExp(`^${PROJECT}$`), says: "a Google Cloud project id", identity: true },
        location: { check: LOCATION, says: "a Vertex AI location (us-east5, global)", resource: true },
        models: { kind: "models", check: /^[A-Za-z0-9.@_-]{1,128}$/, says: "map model names to Vertex model ids", each: "a Vertex model id", optional: true },
      },
      path: [
        { from: /^\/(?<v>v1(?:beta1)?)\/projects\/[^/]+\/locations\/[^/]+\/publishers\/(?<pub>[a-z]+)\/models\/(?<model>[^/:]+):(?<verb>[A-Za-z]+)$/, to: "/{v}/projects/{project}/locations/{location}/publishers/{pub}/models/{model}:{verb}" },
        { from: /^\/(?<v>v1(?:beta1)?)\/publishers\/(?<pub>[a-z]+)\/models\/(?<model>[^/:]+):(?<verb>[A-Za-z]+)$/, to: "/{v}/projects/{project}/locations/{location}/publishers/{pub}/models/{model}:{verb}" },
      ],
      query: {},
    },
    wires: {
      anthropic: {
        from: /^\/v1\/messages$/, path: "/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict",
        streamPath: "/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:streamRawPredict",
        drop: ["model"], set: { anthropic_version: "vertex-2023-10-16" },
      },
    },
    headers: { semantic: ["x-goog-fieldmask"] },
    streamEnds: ['"finishReason"', "event: message_stop", '"type":"message_stop"'],
    pricing: VERTEX_PRICING,
  },
} as const satisfies Record<string, Flavour>;

export type FlavourName = keyof typeof ROWS;

/** The rows by name, each read as a Flavour (a column one row leaves out is absent, not an error). */
export const FLAVOURS: Readonly<Record<FlavourName, Flavour>> = ROWS;

export interface Provider {
  name: string;
  /** Base URL the rest of the path is appended to. For azure, `{resource}` is the first path segment. */
  baseUrl: string;
  flavour: FlavourName;
  /** What its answers mean: limits, refusals, usage, scope (providers/dialects.ts). */
  dialect: DialectName;
  /** The Azure resource a pool member's base URL was made for (its limits are per resource). */
  resource?: string;
  /** A quota the operator states (`PROVIDERS`' `quota`, quota.ts): the limiter paces at it from the first request. */
  quota?: QuotaSpec;
}

/** The built-in providers. Each speaks its own dialect (the row of its name in dialects.ts) and OpenAI's wire unless it names another flavour. */
const BUILT_IN_ROWS: Partial<Record<DialectName, { baseUrl: string; flavour?: FlavourName }>> = {
  openai: { baseUrl: "https://api.openai.com" },
  anthropic: { baseUrl: "https://api.anthropic.com", flavour: "anthropic" },
  gemini: { baseUrl: "https://generativelanguage.googleapis.com", flavour: "gemini" },
  groq: { baseUrl: "https://api.groq.com/openai" },
  mistral: { baseUrl: "https://api.mistral.ai" },
  openrouter: { baseUrl: "https://openrouter.ai/api" },
  deepseek: { baseUrl: "https://api.deepseek.com" },
  together: { baseUrl: "https://api.together.xyz" },
  fireworks: { baseUrl: "https://api.fireworks.ai/inference" },
  xai: { baseUrl: "https://api.x.ai" },
  azure: { baseUrl: "https://{resource}.openai.azure.com", flavour: "azure" },
  bedrock: { baseUrl: "https://bedrock-runtime.{resource}.amazonaws.com", flavour: "bedrock" },
  vertex: { baseUrl: "https://{resource}-aiplatform.googleapis.com", flavour: "vertex" },
};

export const BUILT_IN: Record<string, Omit<Provider, "name">> = Object.fromEntries(
  Object.entries(BUILT_IN_ROWS).map(([name, r]) => [name, { flavour: "openai", dialect: name as DialectName, ...r }]),
);

/**
 * The built-in providers' `gen_ai.provider.name` where the OpenTelemetry GenAI conventions give a
 * well-known value other than the name (opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai;
 * @opentelemetry/semantic-conventions); any other provider goes by its own name.
 */
export const GENAI_NAMES: Readonly<Record<string, string>> = { gemini: "gcp.gemini", azure: "azure.ai.openai", mistral: "mistral_ai", xai: "x_ai", bedrock: "aws.bedrock", vertex: "gcp.vertex_ai" };

/** A path that reaches a built-in provider, as the gateway's "unknown provider" answer gives it for an example. */
export const EXAMPLE_PATH = "/openai/v1/chat/completions";
