import type { DialectName } from "./dialects";

/**
 * How a family of APIs names its credential, its org/project scoping and its model. A provider
 * is a base URL plus one of these; adding a provider is adding a row, not a class.
 */
export interface Flavour {
  /** Headers whose values identify the credential (hashed into the key, never stored). */
  credentialHeaders: string[];
  /** Query parameters that may carry the credential instead (Gemini's `?key=`). */
  credentialParams: string[];
  /** Headers that scope a credential to an org or project: part of the key. */
  scopeHeaders: string[];
  /** Where the model name is: the JSON body's `model`, or a path segment. */
  model: "body" | "gemini-path" | "azure-path";
}

export const FLAVOURS = {
  openai: { credentialHeaders: ["authorization"], credentialParams: [], scopeHeaders: ["openai-organization", "openai-project"], model: "body" },
  anthropic: { credentialHeaders: ["x-api-key", "authorization"], credentialParams: [], scopeHeaders: [], model: "body" },
  gemini: { credentialHeaders: ["x-goog-api-key", "authorization"], credentialParams: ["key"], scopeHeaders: ["x-goog-user-project"], model: "gemini-path" },
  azure: { credentialHeaders: ["api-key", "authorization"], credentialParams: [], scopeHeaders: [], model: "azure-path" },
} as const satisfies Record<string, Flavour>;

export type FlavourName = keyof typeof FLAVOURS;

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

export const BUILT_IN: Record<string, Omit<Provider, "name">> = {
  openai: { baseUrl: "https://api.openai.com", flavour: "openai", dialect: "openai" },
  anthropic: { baseUrl: "https://api.anthropic.com", flavour: "anthropic", dialect: "anthropic" },
  gemini: { baseUrl: "https://generativelanguage.googleapis.com", flavour: "gemini", dialect: "gemini" },
  groq: { baseUrl: "https://api.groq.com/openai", flavour: "openai", dialect: "groq" },
  mistral: { baseUrl: "https://api.mistral.ai", flavour: "openai", dialect: "mistral" },
  openrouter: { baseUrl: "https://openrouter.ai/api", flavour: "openai", dialect: "openrouter" },
  deepseek: { baseUrl: "https://api.deepseek.com", flavour: "openai", dialect: "deepseek" },
  together: { baseUrl: "https://api.together.xyz", flavour: "openai", dialect: "together" },
  fireworks: { baseUrl: "https://api.fireworks.ai/inference", flavour: "openai", dialect: "fireworks" },
  xai: { baseUrl: "https://api.x.ai", flavour: "openai", dialect: "xai" },
  azure: { baseUrl: "https://{resource}.openai.azure.com", flavour: "azure", dialect: "azure" },
};
