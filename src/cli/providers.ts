import { credentialHeadersOf } from "../providers/credential";
import type { Dialect } from "../providers/dialect";
import { DIALECTS } from "../providers/dialects";
import { lineUrlsOf, SPEAKS } from "../providers/lines";
import { BUILT_IN, FLAVOURS, type FlavourName } from "../providers/table";

/**
 * What the batch command knows per provider: the request paths a batch line may name, the
 * variable holding the credential, and the headers that carry it. All of it comes from the
 * gateway's own rows (BUILT_IN, the flavours, providers/lines.ts), so the two never disagree.
 */
export interface Route {
  provider: string;
  baseUrl: string;
  credentialVar: string;
}

/**
 * What a line's answers mean: its provider's row, as the gateway reads it (Groq's requests per day,
 * Anthropic's input and output apart, Gemini's refusals); a provider without a row of its own, generic.
 */
export const dialectOfLine = (item: { provider: string }): Dialect => DIALECTS[BUILT_IN[item.provider]?.dialect ?? "generic"];

/** Batch needs a fixed origin per provider: one whose host depends on a resource (Azure's) is left out. */
const fixedOrigin = (provider: string) => !BUILT_IN[provider]!.baseUrl.includes("{");

export const BATCH_PROVIDERS = Object.keys(BUILT_IN).filter(fixedOrigin);

export function isProvider(name: string): boolean {
  return BATCH_PROVIDERS.includes(name);
}

export function knownUrl(provider: string, url: string): boolean {
  return lineUrlsOf(provider).some((u) => (typeof u === "string" ? u === url : u.pattern.test(url)));
}

export function knownUrls(provider: string): string[] {
  return lineUrlsOf(provider).map((u) => (typeof u === "string" ? u : u.shown));
}

/** OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, GROQ_API_KEY, ... */
export function credentialVar(provider: string): string {
  return `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

export function route(provider: string, baseUrlOverride?: string): Route {
  const p = BUILT_IN[provider];
  if (!p || !isProvider(provider)) throw new Error(`unknown provider ${JSON.stringify(provider)}`);
  return { provider, baseUrl: (baseUrlOverride ?? p.baseUrl).replace(/\/+$/, ""), credentialVar: credentialVar(provider) };
}

/**
 * The credential headers the provider expects (never anything else: the key comes from the
 * environment): as its flavour sends a credential, or as the family it speaks on `url` does
 * (providers/lines.ts `SPEAKS`), with the headers every request of its family carries.
 */
export function authHeaders(provider: string, url: string, key: string): Record<string, string> {
  const f = FLAVOURS[BUILT_IN[provider]!.flavour];
  const speaks = Object.hasOwn(SPEAKS, provider) ? SPEAKS[provider] : undefined;
  const send = speaks?.routes.test(url) ? FLAVOURS[speaks.as as FlavourName].send : f.send;
  return { ...credentialHeadersOf(send, key), ...f.fixed };
}

/** Where the provider puts the id of a request, for the output line's `request_id`. */
export function requestId(headers: Headers): string | null {
  return headers.get("x-request-id") ?? headers.get("request-id") ?? headers.get("x-goog-request-id") ?? null;
}
