import { DIALECTS } from "./dialects";
import { hostPartOf, hostValue, modelFromPath } from "./url";
import { FLAVOURS, type Provider } from "./table";

/** A caller's `x-slotgate-limit-key` label: replaces the model part, nothing else. */
export const LABEL = /^[A-Za-z0-9._@+\/-]{1,128}$/;

/**
 * After the model part of a token count's key (a character no label has): a count has limits of its
 * own, apart from generation's ("Token counting and message creation have separate and independent
 * rate limits", docs.anthropic.com/en/docs/build-with-claude/token-counting; Gemini's and Vertex's
 * `countTokens` are outside the generation quotas), so it has a limiter of its own, which neither
 * draws from the generation's windows nor reads its answers' headers into them.
 */
export const COUNT_KEY = "~count";

/** Whether `rest` is its family's token-count endpoint (its pricing row's `counts`: free, limited apart). */
export const countsTokens = (p: Provider, rest: string): boolean => FLAVOURS[p.flavour].pricing.counts.test(rest);

export interface KeyParts {
  key: string;
  model: string;
  /** The hash of the caller's own credential (its cache entries and labels are the credential's), or a member's. */
  credentialHash: string;
  /** Whose limits the path says it counts against, where its row reads one (Vertex's project); null: none. */
  identity?: string | null;
}

/** The first 16 hex of SHA-256: enough to tell credentials (or tokens) apart, never enough to recover one. */
export async function sha256Hex16(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * `<provider>:<model or *>:<first 16 hex of SHA-256(credential + org/project)>`. The raw
 * credential only ever enters the hash; provider and hash always stay, so a label cannot
 * reach another tenant's limiter. Where the row reads whose limits the path names (Vertex's
 * project) and `proven` says the provider has answered this credential there, the hash is that
 * identity's instead (the one its pool members' keys carry): every token of it shares one limiter.
 */
export async function limitKey(p: Provider, headers: Headers, url: URL, rest: string, body: unknown, label: string | null, proven?: (credentialHash: string, identity: string) => boolean): Promise<KeyParts> {
  const hash = await credentialHash(p, headers, url);
  const identity = pathIdentity(p, rest);
  const owner = identity !== null && proven?.(hash, identity) ? await identityHash(p.flavour, identity) : hash;
  return { ...keyFor(p, owner, rest, body, label), credentialHash: hash, identity };
}

/** The hash an identity (an account, a project) goes by in limit keys, for its members and its proven callers alike. */
export const identityHash = (flavour: string, identity: string): Promise<string> => sha256Hex16(`identity\n${flavour}\n${identity}`);

/** Whose limits a caller's path names, as its row reads it (null: the row reads none, or the path names none). */
export function pathIdentity(p: Provider, rest: string): string | null {
  const m = FLAVOURS[p.flavour].identity?.exec(routeOf(p, rest));
  return m ? m[1]! : null;
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
 * The key for a credential already hashed: the label, else the model the body or path names
 * (without a version its dialect says limits ignore), else `*`; where the dialect scopes limits per
 * resource (Azure, Bedrock, Vertex), `<resource>/` before it, label or not; on a token count, COUNT_KEY after it.
 */
export function keyFor(p: Provider, credentialHash: string, rest: string, body: unknown, label: string | null): KeyParts {
  const scope = DIALECTS[p.dialect].scope;
  let model = label ?? limitModel(requestModel(p, rest, body), scope?.version);
  model = model && model.length <= 128 ? model : "*";
  const resource = scope?.resource ? resourceOf(p, rest) : null;
  if (resource) model = `${resource}/${model}`;
  if (countsTokens(p, rest)) model += COUNT_KEY;
  return { key: `${p.name}:${model}:${credentialHash}`, model, credentialHash };
}

/**
 * What a request's answers are priced as: `model`, or where the provider's prices depend on the
 * resource (the dialect's `pricedByResource`: Vertex's location), `<resource>/<model>`, the
 * resource taken from the key's model (`keyFor` puts it first, label or not).
 */
export function priceName(p: Provider, keyModel: string, model: string): string {
  const i = keyModel.indexOf("/");
  return DIALECTS[p.dialect].scope?.pricedByResource && i > 0 ? `${keyModel.slice(0, i)}/${model}` : model;
}

/** The model whose limits a request counts against: its name without the version the row says its limits ignore. */
const limitModel = (model: string | null, version: RegExp | undefined) => (model && version ? model.replace(version, "") || model : model);

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
