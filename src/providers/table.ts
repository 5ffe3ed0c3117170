/**
 * @module The provider table: the API families (flavours) a provider speaks, one row each, and
 * the built-in providers, each a base URL plus a flavour and a dialect. Adding a provider is
 * adding a row, not a class. Column types in flavour.ts.
 */
import { POOLS_NAME } from "./address";
import { FILE_BATCHES, INLINE_BATCHES } from "./batches";
import type { DialectName } from "./dialects";
import type { Flavour } from "./flavour";
import { ANTHROPIC_PRICING, GEMINI_PRICING, OPENAI_PRICING } from "./prices";

/** The header most families read a credential from. */
const AUTHORIZATION = "authorization";
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
};

export const BUILT_IN: Record<string, Omit<Provider, "name">> = Object.fromEntries(
  Object.entries(BUILT_IN_ROWS).map(([name, r]) => [name, { flavour: "openai", dialect: name as DialectName, ...r }]),
);

/**
 * The built-in providers' `gen_ai.provider.name` where the OpenTelemetry GenAI conventions give a
 * well-known value other than the name (opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai;
 * @opentelemetry/semantic-conventions); any other provider goes by its own name.
 */
export const GENAI_NAMES: Readonly<Record<string, string>> = { gemini: "gcp.gemini", azure: "azure.ai.openai", mistral: "mistral_ai", xai: "x_ai" };

/** A path that reaches a built-in provider, as the gateway's "unknown provider" answer gives it for an example. */
export const EXAMPLE_PATH = "/openai/v1/chat/completions";
