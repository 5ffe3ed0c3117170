// A caller's request as one pool member sends it: the member's URL, its credential (placed in its
// header, or made for each attempt: signed, minted), nothing of the caller's own credential or org
// scoping; for a member of another family serving the same wire shape (Claude on Bedrock or
// Vertex in an Anthropic pool), the member's path and body, and its answer as the caller's SDK reads it.
import { addressOf, askedModel, filled, memberModel } from "../providers/address";
import { type Authorizer, tokenAuthorizer, sigv4Authorizer } from "../providers/auth/authorize";
import { readServiceAccountKey } from "../providers/auth/service-account";
import { isMade, type Placed, placeCredential } from "../providers/credential";
import type { Wire } from "../providers/flavour";
import { CREDENTIAL_AND_SCOPE_HEADERS, CREDENTIAL_HEADERS, CREDENTIAL_PARAMS } from "../providers/headers";
import { DIALECTS } from "../providers/dialects";
import { credentialHash, identityHash, keyFor, priceName, requestModel } from "../providers/key";
import { type FlavourName, FLAVOURS } from "../providers/table";
import { upstreamUrl } from "../providers/url";
import type { KeyMeta } from "../limiter/types";
import { wireBody, wireStream } from "./wire";
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
  /** Its credential, made for each attempt (signed, minted); absent: `headers` carry it. */
  authorizer?: Authorizer;
  /** Its own body, where it serves another family's request. */
  body?: Uint8Array;
  /** Its answer as the caller's SDK reads it (Bedrock's event stream as server-sent events). */
  answer?: (res: Response) => Response;
  /** What its answers are priced as: its provider and its name for the model. */
  priceAs?: { provider: string; model: string };
}

/** Each member's hash, computed once per isolate (its secret does not change in one). */
const hashes = new WeakMap<Member, string>();

/**
 * The hash a member's key goes by in its limiter keys (`provider:model:hash`): its account's or
 * project's where its row names one (every credential of it shares its limits), else its credential's.
 */
export async function memberHash(m: Member): Promise<string> {
  let hash = hashes.get(m);
  if (hash === undefined) {
    if (m.address?.identity !== undefined) hash = await identityHash(m.provider.flavour, m.address.identity);
    else {
      const placed = placedOf(m);
      const url = new URL("https://member.invalid/");
      for (const [k, v] of placed.query) url.searchParams.set(k, v);
      hash = await credentialHash(m.provider, withCredential(placed, new Headers()), url);
    }
    hashes.set(m, hash);
  }
  return hash;
}

const NOTHING: Placed = { headers: [], query: [] };

/** Where the member's credential goes, as its kind says (a kind made per attempt places nothing here). */
const placedOf = (m: Member): Placed => (isMade(m.send) ? NOTHING : placeCredential(m.send, m.credential));

/** The member's credential made per attempt, if its kind is one; `waitUntil` keeps a token's mint alive for the requests that wait on it. */
function authorizerOf(m: Member, waitUntil?: (p: Promise<unknown>) => void): Authorizer | undefined {
  const s = m.send;
  if (s.kind === "sigv4") {
    const c = m.secrets!;
    return sigv4Authorizer(s.service, m.address?.resource ?? "", { accessKeyId: c.accessKeyId!, secretAccessKey: c.secretAccessKey!, ...(c.sessionToken && { sessionToken: c.sessionToken }) });
  }
  if (s.kind === "service-account") return tokenAuthorizer(readServiceAccountKey(m.credential), waitUntil);
  return undefined;
}

/** `headers` without any caller credential or scope, with the member's credential where its flavour sends it. */
function withCredential(placed: Placed, headers: Headers): Headers {
  for (const h of CREDENTIALS) headers.delete(h);
  for (const [k, v] of placed.headers) headers.set(k, v);
  return headers;
}

/** What a member is asked to send: the caller's path (after the provider), query, headers and body (`json`: its one parse). */
export interface Asking {
  rest: string;
  search: string;
  headers: Headers;
  json: unknown;
  /** The family the caller speaks (the pool's): a member of another serves it through its row's wire. */
  family: FlavourName;
  waitUntil?: (p: Promise<unknown>) => void;
}

/**
 * The request for `m`, or null when `m` cannot serve it (a member with no name for the model, a
 * path its row does not take, or one that would leave its base URL). The headers are copied only
 * when asked for: of a pool's members, only the chosen one's are.
 */
export async function memberRequest(m: Member, r: Asking): Promise<MemberRequest | null> {
  const flavour = FLAVOURS[m.provider.flavour];
  const wire = m.provider.flavour === r.family ? undefined : flavour.wires?.[r.family];
  const query = new URLSearchParams(r.search);
  for (const q of CREDENTIAL_PARAMS) query.delete(q);
  let path = r.rest;
  let served: { body: Uint8Array; answer?: (res: Response) => Response; model: string } | undefined;
  if (wire) {
    const to = wired(m, wire, r);
    if (!to) return null;
    ({ path, served } = to);
  } else if (m.address && flavour.member) {
    const to = addressOf(flavour.member, m.address, r.rest, r.json);
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
  const k = keyFor(m.provider, hash, path, served ? { model: served.model } : r.json, null);
  let headers: Headers | undefined;
  const authorizer = authorizerOf(m, r.waitUntil);
  // Priced as its own provider's model where it serves another family's, or at its own location (Vertex's).
  const own = served?.model ?? (DIALECTS[m.provider.dialect].scope?.pricedByResource ? requestModel(m.provider, path, r.json) : null);
  const priced = own === null ? null : priceName(m.provider, k.model, own);
  return {
    url,
    get headers() {
      return (headers ??= withCredential(placed, wire ? wireHeaders(wire, r.headers) : new Headers(r.headers)));
    },
    key: { key: k.key, provider: m.provider.name, model: k.model },
    credentialHash: hash,
    ...(authorizer && { authorizer }),
    ...(served && { body: served.body, ...(served.answer && { answer: served.answer }) }),
    ...(priced !== null && { priceAs: { provider: m.provider.name, model: priced } }),
  };
}

/** A member of another family serving the caller's request: its path, its body and its answer's framing; null when it cannot. */
function wired(m: Member, wire: Wire, r: Asking): { path: string; served: { body: Uint8Array; answer?: (res: Response) => Response; model: string } } | null {
  if (!wire.from.test(r.rest) || !m.address) return null;
  const model = memberModel(m.address, askedModel({}, r.json));
  if (model === null) return null;
  const streams = typeof r.json === "object" && r.json !== null && (r.json as { stream?: unknown }).stream === true;
  const path = filled(streams ? wire.streamPath : wire.path, { ...m.address.fields, model: encodeURIComponent(model) });
  const body = wireBody(wire, r.json, r.headers);
  if (!body) return null;
  return { path, served: { body, model, ...(streams && wire.stream === "eventstream" && { answer: (res: Response) => wireStream(wire, res) }) } };
}

/** The caller's headers for a member of another family: those its wire moves into the body are not sent. */
function wireHeaders(wire: Wire, caller: Headers): Headers {
  const h = new Headers(caller);
  for (const name of Object.keys(wire.headersToBody ?? {})) h.delete(name);
  return h;
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
