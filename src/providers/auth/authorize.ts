/**
 * @module A pool member's credential made for each attempt, over the attempt's final URL and body:
 * a SigV4 signature with its IAM credentials (sigv4.ts), or a bearer token minted from its
 * service account key (access-tokens.ts). The member's secrets stay in its POOLS entry's Worker
 * secrets and this isolate's memory; none is logged, stored or put in an error.
 */
import type { ServiceAccountKey } from "./service-account";
import { GoogleTokens } from "./access-tokens";
import { type AwsCredentials, signRequest } from "./sigv4";

/** An attempt's credential, made when it is sent. */
export interface Authorizer {
  /** Sets the credential's headers on `headers` (the attempt's own copy). */
  authorize(method: string, url: URL, headers: Headers, body: Uint8Array | null): Promise<void>;
  /** The provider refused the credential (a 401): forget a minted one, so the next attempt mints anew. True when there was one. */
  renew?(): boolean;
  /**
   * Makes ready what `authorize` will need (a minted token), before the attempt takes its slot: a
   * key's windows are charged when a slot is granted, and a provider counts a request when it
   * arrives, so a mint in between would have the limiter a mint's time ahead of it. Never throws:
   * a failed mint is thrown by the attempt's `authorize`, where an attempt's failures are handled.
   */
  prepare?(): Promise<void>;
}

/**
 * Headers signed besides `host`: those AWS reads and nothing on the way rewrites (the runtime sets
 * its own `content-length`, `accept-encoding` and `user-agent`, which are never signed).
 */
const SIGNED = /^(?:content-type|x-amz-.*|x-amzn-bedrock-.*)$/;

/** SigV4 for `service` in `region`: the signature covers the method, the URL as sent, the signed headers and the body's hash. */
export function sigv4Authorizer(service: string, region: string, credentials: AwsCredentials, now: () => number = Date.now): Authorizer {
  return {
    async authorize(method, url, headers, body) {
      const signed: [string, string][] = [];
      for (const [k, v] of headers) if (SIGNED.test(k)) signed.push([k, v]);
      const added = await signRequest({ method, url: url.href, headers: signed, body: body ?? undefined, region, service, credentials, now: now() });
      for (const [k, v] of Object.entries(added)) headers.set(k, v);
    },
  };
}

/** This isolate's tokens, one per service account (and token endpoint). */
const tokens = new GoogleTokens({ fetch: (input, init) => fetch(input, init), now: () => Date.now() });

/** A bearer token minted from `key` (kept until shortly before it expires, then minted again); `waitUntil` keeps a mint alive for the requests that wait on it. */
export function tokenAuthorizer(key: ServiceAccountKey, waitUntil?: (p: Promise<unknown>) => void): Authorizer {
  let last: string | null = null;
  /** A mint `prepare` saw fail: its attempt fails with it, never minting twice. */
  let failed: { err: unknown } | null = null;
  return {
    async authorize(_method, _url, headers) {
      const f = failed;
      failed = null;
      if (f) throw f.err;
      last = await tokens.token(key, { waitUntil });
      headers.set("authorization", `Bearer ${last}`);
    },
    async prepare() {
      failed = null;
      await tokens.token(key, { waitUntil }).catch((err: unknown) => void (failed = { err }));
    },
    renew() {
      if (last === null) return false;
      tokens.refuse(key, last);
      last = null;
      return true;
    },
  };
}
