/**
 * @module The provider table: the API families (flavours) a provider speaks, one row each, and
 * the built-in providers, each a base URL plus a flavour and a dialect. Adding a provider is
 * adding a row, not a class. Column types in flavour.ts.
 */
import { FILE_BATCHES, INLINE_BATCHES } from "./batches";
import type { DialectName } from "./dialects";
import type { Flavour } from "./flavour";
import { ANTHROPIC_PRICING, GEMINI_PRICING, OPENAI_PRICING } from "./prices";

/** A pool member's name for a thing (a deployment): what POOLS names take. */
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

const ROWS = {
  /**
   * platform.openai.com/docs/api-reference/authentication: `Authorization: Bearer`, and
   * `OpenAI-Organization` / `OpenAI-Project` scoping it; answers tell `x-ratelimit-*`, the org
   * (`openai-organization`) and `openai-processing-ms`; `OpenAI-Beta` asks for beta features.
   */
  openai: {
    title: "OpenAI",
    credentialHeaders: ["authorization"], credentialParams: [], scopeHeaders: ["openai-organization", "openai-project"],
    send: { kind: "header", header: "authorization", scheme: "Bearer" },
    model: "body",
    compatible: ["openai", "azure"],
    headers: { quota: ["x-ratelimit-"], account: ["openai-organization", "openai-project"], timing: ["openai-processing-ms"], member: [], semantic: ["openai-beta"] },
    streamEnds: ["data: [DONE]", "response.completed"],
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
    credentialHeaders: ["x-api-key", "authorization"], credentialParams: [], scopeHeaders: [],
    send: { kind: "header", header: "x-api-key" },
    fixed: { "anthropic-version": "2023-06-01" },
    model: "body",
    compatible: ["anthropic"],
    headers: { quota: ["anthropic-ratelimit-"], account: ["anthropic-organization-id"], timing: [], member: [], semantic: ["anthropic-beta", "anthropic-version"] },
    streamEnds: ["event: message_stop", '"type":"message_stop"'],
    pricing: ANTHROPIC_PRICING,
    batches: INLINE_BATCHES,
  },
  /**
   * ai.google.dev/gemini-api/docs/api-key: `x-goog-api-key` (or `?key=`), `x-goog-user-project`
   * billing a project; `X-Goog-FieldMask` chooses the answer's fields (Google's system
   * parameters). Its OpenAI-compatible routes take OpenAI's bearer (ai.google.dev/gemini-api/docs/openai).
   * An uploaded file is `files/<id>`, or that on the API's host (/docs/files).
   */
  gemini: {
    title: "Gemini",
    credentialHeaders: ["x-goog-api-key", "authorization"], credentialParams: ["key"], scopeHeaders: ["x-goog-user-project"],
    send: { kind: "header", header: "x-goog-api-key" },
    speaks: { routes: /^\/v1(?:beta|alpha)?\/openai\//, as: "openai" },
    model: "gemini-path",
    compatible: ["gemini"],
    headers: { quota: [], account: [], timing: [], member: [], semantic: ["x-goog-fieldmask"] },
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
    credentialHeaders: ["api-key", "authorization"], credentialParams: [], scopeHeaders: [],
    send: { kind: "header", header: "api-key" },
    model: "azure-path",
    compatible: ["azure", "openai"],
    member: {
      fields: {
        resource: { kind: "text", check: /^[a-z0-9][a-z0-9-]{0,62}$/i, says: "the Azure resource's name", resource: true },
        deployments: { kind: "models", check: NAME, says: "map model names to deployment names", each: "a deployment name" },
        apiVersion: { kind: "text", check: /^[0-9a-z.-]{1,32}$/i, says: "an api-version", default: "2024-10-21" },
      },
      // `/v1/chat/completions` is `/openai/deployments/<name>/chat/completions?api-version=` there.
      path: { from: /^(?:\/v1(?=\/))?(?<rest>.*)$/s, to: "/openai/deployments/{model}{rest}" },
      query: { "api-version": "{apiVersion}" },
    },
    headers: { quota: ["x-ratelimit-"], account: [], timing: [], member: ["x-ms-", "azureml-", "apim-request-id"], semantic: [] },
    streamEnds: ["data: [DONE]", "response.completed"],
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

/** A built-in provider: its Provider fields, and what is said of it by name. */
export interface BuiltIn extends Omit<Provider, "name"> {
  /** Its name as the CLI's help writes it. */
  title: string;
  /** `gen_ai.provider.name`, where the OpenTelemetry GenAI conventions give a well-known value other than its name. */
  genai?: string;
}

/**
 * The OpenTelemetry values are the conventions' `gen_ai.provider.name` registry
 * (opentelemetry.io/docs/specs/semconv/registry/attributes/gen-ai; @opentelemetry/semantic-conventions).
 */
export const BUILT_IN: Record<string, BuiltIn> = {
  openai: { baseUrl: "https://api.openai.com", flavour: "openai", dialect: "openai", title: "OpenAI" },
  anthropic: { baseUrl: "https://api.anthropic.com", flavour: "anthropic", dialect: "anthropic", title: "Anthropic" },
  gemini: { baseUrl: "https://generativelanguage.googleapis.com", flavour: "gemini", dialect: "gemini", title: "Gemini", genai: "gcp.gemini" },
  groq: { baseUrl: "https://api.groq.com/openai", flavour: "openai", dialect: "groq", title: "Groq" },
  mistral: { baseUrl: "https://api.mistral.ai", flavour: "openai", dialect: "mistral", title: "Mistral", genai: "mistral_ai" },
  openrouter: { baseUrl: "https://openrouter.ai/api", flavour: "openai", dialect: "openrouter", title: "OpenRouter" },
  deepseek: { baseUrl: "https://api.deepseek.com", flavour: "openai", dialect: "deepseek", title: "DeepSeek" },
  together: { baseUrl: "https://api.together.xyz", flavour: "openai", dialect: "together", title: "Together AI" },
  fireworks: { baseUrl: "https://api.fireworks.ai/inference", flavour: "openai", dialect: "fireworks", title: "Fireworks AI" },
  xai: { baseUrl: "https://api.x.ai", flavour: "openai", dialect: "xai", title: "xAI", genai: "x_ai" },
  azure: { baseUrl: "https://{resource}.openai.azure.com", flavour: "azure", dialect: "azure", title: "Azure OpenAI", genai: "azure.ai.openai" },
};

/** A path that reaches a built-in provider, as the gateway's "unknown provider" answer gives it for an example. */
export const EXAMPLE_PATH = "/openai/v1/chat/completions";
