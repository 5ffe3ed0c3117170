// A caller's request as one pool member sends it: the member's URL, its credential in its header,
// nothing of the caller's own credential or org scoping.
import { addressOf } from "../providers/address";
import { type Placed, placeCredential } from "../providers/credential";
import { CREDENTIAL_AND_SCOPE_HEADERS, CREDENTIAL_HEADERS, CREDENTIAL_PARAMS } from "../providers/headers";
import { credentialHash, keyFor } from "../providers/key";
import { FLAVOURS } from "../providers/table";
import { upstreamUrl } from "../providers/url";
import type { KeyMeta } from "../limiter/types";
import type { Member } from "./config";

/**
 * Every header any flavour reads a credential or a scope from (a virtual key never goes upstream),
 * and the method overrides some front ends honour (Google's): a scope is checked on the method sent.
 */
const CREDENTIALS = [...CREDENTIAL_AND_SCOPE_HEADERS, "x-http-method-override", "x-http-method", "x-method-override"];

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
    const placed = placedOf(m);
    const url = new URL("https://member.invalid/");
    for (const [k, v] of placed.query) url.searchParams.set(k, v);
    hash = await credentialHash(m.provider, withCredential(placed, new Headers()), url);
    hashes.set(m, hash);
  }
  return hash;
}

/** Where the member's credential goes, as its flavour's row says. */
const placedOf = (m: Member): Placed => placeCredential(FLAVOURS[m.provider.flavour].send, m.credential);

/** `headers` without any caller credential or scope, with the member's credential where its flavour sends it. */
function withCredential(placed: Placed, headers: Headers): Headers {
  for (const h of CREDENTIALS) headers.delete(h);
  for (const [k, v] of placed.headers) headers.set(k, v);
  return headers;
}

/**
 * The request for `m`, or null when `m` cannot serve it (an Azure member with no deployment for
 * the model, or a path that would leave its base URL). `rest` is the path after `/<provider>`.
 * The headers are copied only when asked for: of a pool's members, only the chosen one's are.
 */
export async function memberRequest(m: Member, rest: string, search: string, caller: Headers, body: unknown): Promise<MemberRequest | null> {
  const query = new URLSearchParams(search);
  for (const q of CREDENTIAL_PARAMS) query.delete(q);
  let path = rest;
  const shape = FLAVOURS[m.provider.flavour].member;
  if (m.address && shape) {
    const to = addressOf(shape, m.address, rest, body);
    if (!to) return null;
    path = to.path;
    for (const [k, v] of to.query) query.set(k, v);
  }
  const placed = placedOf(m);
  for (const [k, v] of placed.query) query.set(k, v);
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
      return (headers ??= withCredential(placed, new Headers(caller)));
    },
    key: { key: k.key, provider: m.provider.name, model: k.model },
    credentialHash: hash,
  };
}

/** A virtual key, wherever the caller's SDK puts a provider key (or Gemini's `?key=`); null: none. */
export function virtualKeyIn(headers: Headers, url: URL): string | null {
  for (const h of CREDENTIAL_HEADERS) {
    const v = headers.get(h)?.replace(/^Bearer\s+/i, "").trim();
    if (v?.startsWith("sgk-")) return v;
  }
  for (const p of CREDENTIAL_PARAMS) {
    const q = url.searchParams.get(p);
    if (q?.startsWith("sgk-")) return q;
  }
  return null;
}
