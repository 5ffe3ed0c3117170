/**
 * @module Access tokens minted from a service account key, and the per-isolate cache that keeps
 * them. The gateway signs an assertion (service-account.ts) and POSTs it to the key's `token_uri` as
 * `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=...`; the answer is
 * `{"access_token", "expires_in", "token_type": "Bearer"}` and a refusal `{"error",
 * "error_description"}` (developers.google.com/identity/protocols/oauth2/service-account, "HTTP/REST"
 * and its error codes; RFC 6749 section 5.2).
 *
 * The cache, one per isolate:
 * - keyed by the key's identity (email, key id, token endpoint, scope): nothing secret, so the
 *   identity itself is the map key (hashing it would hide nothing and cost a digest per request);
 * - keeps each token until `min(5 minutes, half its lifetime)` before it expires. Five minutes is
 *   google-auth-library's own margin (`DEFAULT_EAGER_REFRESH_THRESHOLD_MILLIS`): a token taken just
 *   before an attempt must still hold when Vertex checks it, after the request's upload and any
 *   clock skew; a shorter-lived token (a stand-in's, a custom `token_uri`'s) is still reused for half
 *   its life rather than minted per request. Google's tokens last an hour, so this mints about once
 *   in 55 minutes per key;
 * - single flight: requests that find no token while one is being minted wait for that mint. The
 *   Workers runtime cancels a request's I/O when that request ends, and a promise another request
 *   awaits with it (developers.cloudflare.com/workers/observability/errors, "cross-request promise"),
 *   so the request that mints hands its mint to `waitUntil` when it has one, and a waiter gives up on
 *   another's mint after `FOLLOW_MS` and mints itself: a cancelled leader costs a waiter a delay, never a hang;
 * - `refuse(key, token)`: Vertex answered 401 to that token; the next request mints again (a later
 *   401 for an older token leaves a newer one alone);
 * - bounded: past `maxEntries` identities the least recently used goes.
 *
 * The private key lives only in the caller's key object and, once imported, as a non-extractable
 * CryptoKey here; it never enters an error message, a log or storage.
 */
import { CLOUD_PLATFORM, GoogleAuthError, importSigner, type ServiceAccountKey, type Signer, signAssertion } from "./service-account";

export const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** The most a token is kept short of its expiry (google-auth-library's eager-refresh margin). */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** How long a request waits on another request's mint before it mints itself. */
export const FOLLOW_MS = 5_000;
const MAX_DESCRIPTION = 200;

export interface GoogleTokensOptions {
  fetch: (input: string, init: RequestInit) => Promise<Response>;
  /** Epoch ms. */
  now: () => number;
  /** Resolves after `ms` (a waiter's limit on another request's mint). */
  sleep?: (ms: number) => Promise<void>;
  /** Identities kept at most (default 256). */
  maxEntries?: number;
}

/** What the request asking for a token lends the mint it may start. */
export interface TokenRequest {
  scope?: string;
  /** The request's `ctx.waitUntil`: keeps its mint alive for the others if the request itself ends first. */
  waitUntil?: (p: Promise<unknown>) => void;
}

interface Held {
  value: string;
  /** Epoch ms from which a request mints a new one. */
  refreshAt: number;
}

interface Entry {
  signer?: Signer;
  token?: Held;
  pending?: Promise<Held>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class GoogleTokens {
  readonly #entries = new Map<string, Entry>();
  readonly #o: Required<GoogleTokensOptions>;

  constructor(o: GoogleTokensOptions) {
    this.#o = { sleep: defaultSleep, maxEntries: 256, ...o };
  }

  /** An access token for `key`: the cached one while it is fresh, else one minted (once for every request that asks meanwhile). */
  async token(key: ServiceAccountKey, r: TokenRequest = {}): Promise<string> {
    const scope = r.scope ?? CLOUD_PLATFORM;
    const e = this.#touch(identity(key, scope));
    if (e.token && this.#o.now() < e.token.refreshAt) return e.token.value;
    if (e.pending) {
      const led = await Promise.race([e.pending.then((t) => t.value), this.#o.sleep(FOLLOW_MS).then(() => null)]);
      if (led !== null) return led;
    }
    const mint = this.#mint(e, key, scope);
    e.pending = mint;
    const settled = mint.finally(() => {
      if (e.pending === mint) e.pending = undefined;
    });
    r.waitUntil?.(settled.catch(() => undefined));
    return (await settled).value;
  }

  /** Vertex refused `token` (a 401): forget it if it is still the one held, so the next request mints. */
  refuse(key: ServiceAccountKey, token: string, scope = CLOUD_PLATFORM): void {
    const e = this.#entries.get(identity(key, scope));
    if (e?.token?.value === token) e.token = undefined;
  }

  /** Identities held. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entry for `id`, made the most recently used; the least recently used goes past the bound. */
  #touch(id: string): Entry {
    const e = this.#entries.get(id) ?? {};
    this.#entries.delete(id);
    this.#entries.set(id, e);
    for (const old of this.#entries.keys()) {
      if (this.#entries.size <= this.#o.maxEntries) break;
      this.#entries.delete(old);
    }
    return e;
  }

  async #mint(e: Entry, key: ServiceAccountKey, scope: string): Promise<Held> {
    // Imported once and kept; set only when done, so no request waits on another's import.
    e.signer ??= await importSigner(key);
    const start = this.#o.now();
    const assertion = await signAssertion(key, e.signer, scope, Math.floor(start / 1000));
    const { value, lifetimeMs } = await exchange(this.#o.fetch, key, assertion);
    const held = { value, refreshAt: start + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2) };
    e.token = held;
    return held;
  }
}

/** The cache's key: who the token is for, at which endpoint, for what. No secret is in it. */
const identity = (key: ServiceAccountKey, scope: string) => `${key.clientEmail}\n${key.privateKeyId}\n${key.tokenUri}\n${scope}`;

/** Posts the assertion to the key's token endpoint; a clear GoogleAuthError for any answer but a token. */
export async function exchange(fetchFn: GoogleTokensOptions["fetch"], key: ServiceAccountKey, assertion: string): Promise<{ value: string; lifetimeMs: number }> {
  const host = new URL(key.tokenUri).host;
  const who = `service account ${key.clientEmail}`;
  let res: Response;
  try {
    res = await fetchFn(key.tokenUri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
    });
  } catch {
    throw new GoogleAuthError("unreachable", `token endpoint ${host} could not be reached for ${who}`);
  }
  let body: Record<string, unknown> | null = null;
  try {
    const parsed: unknown = await res.json();
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const code = typeof body?.error === "string" ? body.error.slice(0, 64) : undefined;
    const said = describe(body?.error_description, assertion);
    const what = [code, said].filter(Boolean).join(": ") || "no OAuth error in the answer";
    throw new GoogleAuthError("refused", `token endpoint ${host} refused ${who} (${res.status}): ${what}`, res.status, code);
  }
  const value = body?.access_token;
  if (typeof value !== "string" || value === "") throw new GoogleAuthError("bad_answer", `token endpoint ${host} answered ${res.status} without an access_token for ${who}`, res.status);
  const type = body?.token_type;
  if (type !== undefined && (typeof type !== "string" || type.toLowerCase() !== "bearer")) {
    throw new GoogleAuthError("bad_answer", `token endpoint ${host} answered a token that is not a Bearer token for ${who}`, res.status);
  }
  const seconds = body?.expires_in;
  // No lifetime, no caching: a token of unknown age is used for the request that asked for it only.
  const lifetimeMs = typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 0;
  return { value, lifetimeMs };
}

/** The endpoint's own description, short, printable, and never quoting the assertion back. */
function describe(d: unknown, assertion: string): string {
  if (typeof d !== "string") return "";
  return d.split(assertion).join("[assertion]").replace(/[^\x20-\x7e]/g, " ").slice(0, MAX_DESCRIPTION);
}
