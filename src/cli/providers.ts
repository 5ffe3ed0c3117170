import { BUILT_IN } from "../providers/table";

/**
 * What the batch command knows per provider: the request paths a batch line may name, the
 * variable holding the credential, and the headers that carry it. Base URLs come from the
 * gateway's own table (BUILT_IN), so the two never disagree.
 */
export interface Route {
  provider: string;
  baseUrl: string;
  credentialVar: string;
}

const OPENAI_COMPATIBLE = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"];

/** Exact paths per provider; gemini's native paths carry the model, so they are matched by pattern. */
const KNOWN_URLS: Record<string, (string | RegExp)[]> = {
  openai: ["/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"],
  anthropic: ["/v1/messages"],
  gemini: [
    "/v1beta/openai/chat/completions",
    "/v1beta/openai/embeddings",
    /^\/v1beta\/models\/[A-Za-z0-9._-]+:(generateContent|embedContent|countTokens)$/,
  ],
};

/** Batch needs a fixed origin per provider; azure's host depends on the resource, so it is left out. */
const UNSUPPORTED = new Set(["azure"]);

export const BATCH_PROVIDERS = Object.keys(BUILT_IN).filter((p) => !UNSUPPORTED.has(p));

export function isProvider(name: string): boolean {
  return BATCH_PROVIDERS.includes(name);
}

export function knownUrl(provider: string, url: string): boolean {
  const list = KNOWN_URLS[provider] ?? OPENAI_COMPATIBLE;
  return list.some((u) => (typeof u === "string" ? u === url : u.test(url)));
}

export function knownUrls(provider: string): string[] {
  return (KNOWN_URLS[provider] ?? OPENAI_COMPATIBLE).map((u) => (typeof u === "string" ? u : "/v1beta/models/<model>:generateContent"));
}

/** OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, ... */
export function credentialVar(provider: string): string {
  return `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

export function route(provider: string, baseUrlOverride?: string): Route {
  const p = BUILT_IN[provider];
  if (!p || UNSUPPORTED.has(provider)) throw new Error(`unknown provider ${JSON.stringify(provider)}`);
  return { provider, baseUrl: (baseUrlOverride ?? p.baseUrl).replace(/\/+$/, ""), credentialVar: credentialVar(provider) };
}

/** The credential headers the provider expects (never anything else: the key comes from the environment). */
export function authHeaders(provider: string, url: string, key: string): Record<string, string> {
  if (provider === "anthropic") return { "x-api-key": key, "anthropic-version": "2023-06-01" };
  if (provider === "gemini" && !url.startsWith("/v1beta/openai/")) return { "x-goog-api-key": key };
  return { authorization: `Bearer ${key}` };
}

/** Where the provider puts the id of a request, for the output line's `request_id`. */
export function requestId(headers: Headers): string | null {
  return headers.get("x-request-id") ?? headers.get("request-id") ?? headers.get("x-goog-request-id") ?? null;
}
