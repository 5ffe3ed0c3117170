import { DIALECTS } from "./dialects";
import { hostPartOf, hostValue, modelFromPath } from "./url";
import { FLAVOURS, type Provider } from "./table";

/** A caller's `x-slotgate-limit-key` label: replaces the model part, nothing else. */
export const LABEL = /^[A-Za-z0-9._@+\/-]{1,128}$/;

export interface KeyParts {
  key: string;
  model: string;
  credentialHash: string;
}

/** The first 16 hex of SHA-256: enough to tell credentials (or tokens) apart, never enough to recover one. */
export async function sha256Hex16(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * `<provider>:<model or *>:<first 16 hex of SHA-256(credential + org/project)>`. The raw
 * credential only ever enters the hash; provider and hash always stay, so a label cannot
 * reach another tenant's limiter.
 */
export async function limitKey(p: Provider, headers: Headers, url: URL, rest: string, body: unknown, label: string | null): Promise<KeyParts> {
  return keyFor(p, await credentialHash(p, headers, url), rest, body, label);
}

/** The hash of the credential and its org/project scope, as the key carries it. */
export function credentialHash(p: Provider, headers: Headers, url: URL): Promise<string> {
  const f = FLAVOURS[p.flavour];
  const parts = [
    ...f.credentialHeaders.map((h) => headers.get(h) ?? ""),
    ...(f.credentialParams ?? []).map((q) => url.searchParams.get(q) ?? ""),
    ...(f.scopeHeaders ?? []).map((h) => headers.get(h) ?? ""),
  ];
  return sha256Hex16(parts.join("\n"));
}

/**
 * The key for a credential already hashed: the label, else the model the body or path names, else
 * `*`; where the dialect scopes limits per resource (Azure), `<resource>/` before it, label or not.
 */
export function keyFor(p: Provider, credentialHash: string, rest: string, body: unknown, label: string | null): KeyParts {
  let model = label ?? requestModel(p, rest, body);
  model = model && model.length <= 128 ? model : "*";
  const resource = DIALECTS[p.dialect].scope?.resource ? resourceOf(p, rest) : null;
  if (resource) model = `${resource}/${model}`;
  return { key: `${p.name}:${model}:${credentialHash}`, model, credentialHash };
}

/** The resource a request goes to: a pool member's own, else its path's part of a base URL that takes one (an Azure resource, a region, a location). */
function resourceOf(p: Provider, rest: string): string | null {
  if (p.resource) return p.resource.toLowerCase();
  const part = hostPartOf(p);
  return part ? (hostValue(part, rest)?.value ?? null) : null;
}

/** The path after the provider and (where its host part is a segment of the gateway's) that segment: what the dialect's routes are matched against. */
export function routeOf(p: Provider, rest: string): string {
  const part = hostPartOf(p);
  if (!part?.strip) return rest;
  return hostValue(part, rest)?.path ?? rest;
}

/**
 * The model a request names: in its JSON body, or (Gemini, Azure) in its path, except on the
 * routes the dialect says name it in the body (Gemini's and Azure's OpenAI-compatible ones).
 */
export function requestModel(p: Provider, rest: string, body: unknown): string | null {
  const f = FLAVOURS[p.flavour];
  if (f.model === "body" || DIALECTS[p.dialect].scope?.bodyRoutes?.test(routeOf(p, rest))) return bodyModel(body);
  return modelFromPath(f.model, rest);
}

function bodyModel(body: unknown): string | null {
  if (typeof body !== "object" || body === null) return null;
  const m = (body as { model?: unknown }).model;
  return typeof m === "string" && m.length > 0 ? m : null;
}
