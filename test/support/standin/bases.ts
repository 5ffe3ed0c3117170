// Where a gateway points each built-in provider to reach its dialect here: the provider's own base
// URL path behind a prefix naming it (route.ts), so a gateway's `PROVIDERS` overrides only a
// built-in's `baseUrl` and keeps its flavour and dialect. OpenAI and Anthropic stay unprefixed.
/** Path after the stand-in's URL, per built-in provider (the built-in base URL's own path kept: Groq's /openai, Fireworks' /inference). */
export const PROVIDER_PATHS = {
  openai: "",
  anthropic: "",
  azure: "/azure/{resource}",
  gemini: "/gemini",
  groq: "/groq/openai",
  mistral: "/mistral",
  openrouter: "/openrouter/api",
  deepseek: "/deepseek",
  together: "/together",
  fireworks: "/fireworks/inference",
  xai: "/xai",
  // Each region a path prefix (bedrock.ts): the gateway's `{resource}` is the member's or the path's region.
  bedrock: "/bedrock/{resource}",
} as const;

export type BuiltIn = keyof typeof PROVIDER_PATHS;

/** `PROVIDERS` for a gateway with every built-in provider pointed at the stand-in at `url`. */
export function gatewayProviders(url: string, only: readonly BuiltIn[] = Object.keys(PROVIDER_PATHS) as BuiltIn[]): Record<string, { baseUrl: string }> {
  return Object.fromEntries(only.map((name) => [name, { baseUrl: `${url}${PROVIDER_PATHS[name]}` }]));
}

/**
 * Where an OpenAI SDK's base URL goes past a provider's base URL to reach its OpenAI-style route:
 * at the stand-in `url + PROVIDER_PATHS[p] + OPENAI_SDK_PATHS[p]`, through a gateway
 * `gateway + "/" + p + OPENAI_SDK_PATHS[p]` (e.g. Groq: `api.groq.com/openai` + `/v1`).
 */
export const OPENAI_SDK_PATHS = {
  openai: "/v1",
  groq: "/v1",
  mistral: "/v1",
  openrouter: "/v1",
  deepseek: "/v1",
  together: "/v1",
  fireworks: "/v1",
  xai: "/v1",
  gemini: "/v1beta/openai",
} as const;

export type OpenAiStyle = keyof typeof OPENAI_SDK_PATHS;

/** An OpenAI SDK base URL for `provider` straight at the stand-in. */
export const directBase = (url: string, provider: OpenAiStyle) => `${url}${PROVIDER_PATHS[provider]}${OPENAI_SDK_PATHS[provider]}`;
