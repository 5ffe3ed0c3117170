/**
 * @module How a credential goes upstream, by the kind its flavour row names (flavour.ts
 * `CredentialSend`): one entry per kind, no branch per provider. A kind the gateway signs or
 * mints (SigV4, a service account's OAuth token) is one more entry, its module beside it.
 */
import type { CredentialSend } from "./flavour";

type Sender<K extends CredentialSend["kind"]> = (c: Extract<CredentialSend, { kind: K }>, secret: string, headers: Headers, query: URLSearchParams) => void;

const SEND: { [K in CredentialSend["kind"]]: Sender<K> } = {
  header: (c, secret, headers) => headers.set(c.header, c.scheme ? `${c.scheme} ${secret}` : secret),
  query: (c, secret, _headers, query) => query.set(c.param, secret),
};

/** Puts `secret` where `c` says: into `headers` or `query`. */
export function sendCredential(c: CredentialSend, secret: string, headers: Headers, query: URLSearchParams): void {
  (SEND[c.kind] as Sender<CredentialSend["kind"]>)(c, secret, headers, query);
}

/** The headers that carry `secret` as `c` says, for a client that sends headers only (the CLI); a kind that needs more is an error, never a request without its credential. */
export function credentialHeadersOf(c: CredentialSend, secret: string): Record<string, string> {
  const headers = new Headers();
  const query = new URLSearchParams();
  sendCredential(c, secret, headers, query);
  if (query.size > 0) throw new Error(`a credential sent as ${c.kind} needs more than headers`);
  return Object.fromEntries(headers);
}
