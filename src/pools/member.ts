// A caller's request as one pool member sends it: the member's URL, its credential in its header,
// nothing of the caller's own credential or org scoping.
import { credentialHash, keyFor } from "../providers/key";
import { upstreamUrl } from "../providers/url";
import type { KeyMeta } from "../limiter/types";
import type { Member } from "./config";

/**
 * Every header any flavour reads a credential or a scope from (a virtual key never goes upstream),
 * and the method overrides some front ends honour (Google's): a scope is checked on the method sent.
 */
const CREDENTIALS = [
  "authorization", "x-api-key", "api-key", "x-goog-api-key", "openai-organization", "openai-project", "x-goog-user-project",
  "x-http-method-override", "x-http-method", "x-method-override",
];

const HEADER_OF = { openai: "authorization", anthropic: "x-api-key", gemini: "x-goog-api-key", azure: "api-key" } as const;

export interface MemberRequest {
  url: URL;
  headers: Headers;
  /** The member's own rate-limit key (the one a caller holding its key would share). */
  key: KeyMeta;
  credentialHash: string;
}

/** Each member's credential hash, computed once per isolate (its secret does not change in one). */
const hashes = new WeakMap<Member, string>();

/** The hash a member's key goes by in its limiter keys (`provider:model:hash`). */
export async function memberHash(m: Member): Promise<string> {
  let hash = hashes.get(m);
  if (hash === undefined) {
    hash = await credentialHash(m.provider, withCredential(m, new Headers()), new URL("https://member.invalid/"));
    hashes.set(m, hash);
  }
  return hash;
}

/** `headers` without any caller credential or scope, with the member's credential in its flavour's header. */
function withCredential(m: Member, headers: Headers): Headers {
  for (const h of CREDENTIALS) headers.delete(h);
  const header = HEADER_OF[m.provider.flavour];
  headers.set(header, header === "authorization" ? `Bearer ${m.credential}` : m.credential);
  return headers;
}

/**
 * The request for `m`, or null when `m` cannot serve it (an Azure member with no deployment for
 * the model, or a path that would leave its base URL). `rest` is the path after `/<provider>`.
 * The headers are copied only when asked for: of a pool's members, only the chosen one's are.
 */
export async function memberRequest(m: Member, rest: string, search: string, caller: Headers, body: unknown): Promise<MemberRequest | null> {
  const query = new URLSearchParams(search);
  query.delete("key");
  let path = rest;
  if (m.azure) {
    const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
    const deployment = typeof model === "string" && Object.hasOwn(m.azure.deployments, model) ? m.azure.deployments[model]! : null;
    if (!deployment) return null;
    // `/v1/chat/completions` is `/openai/deployments/<name>/chat/completions?api-version=` there.
    path = `/openai/deployments/${encodeURIComponent(deployment)}${rest.replace(/^\/v1(?=\/)/, "")}`;
    query.set("api-version", m.azure.apiVersion);
  }
  const qs = query.toString();
  const url = upstreamUrl(m.provider, path, qs ? `?${qs}` : "");
  if (!url) return null;
  const hash = await memberHash(m);
  // No label: a pooled request cannot name its members' limiters (pools/stage.ts refuses it).
  const k = keyFor(m.provider, hash, path, body, null);
  let headers: Headers | undefined;
  return {
    url,
    get headers() {
      return (headers ??= withCredential(m, new Headers(caller)));
    },
    key: { key: k.key, provider: m.provider.name, model: k.model },
    credentialHash: hash,
  };
}

/** A virtual key, wherever the caller's SDK puts a provider key (or Gemini's `?key=`); null: none. */
export function virtualKeyIn(headers: Headers, url: URL): string | null {
  for (const h of ["authorization", "x-api-key", "api-key", "x-goog-api-key"]) {
    const v = headers.get(h)?.replace(/^Bearer\s+/i, "").trim();
    if (v?.startsWith("sgk-")) return v;
  }
  const q = url.searchParams.get("key");
  return q?.startsWith("sgk-") ? q : null;
}
