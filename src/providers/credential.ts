/**
 * @module How a credential goes upstream, by the kind its flavour row names (flavour.ts
 * `CredentialSend`): one entry per kind, no branch per provider. A kind the gateway signs or
 * mints (SigV4, a service account's OAuth token) is one more entry, its module beside it.
 */
import type { CredentialSend } from "./flavour";

/** Where a credential goes: headers to set, query parameters to set. */
export interface Placed {
  headers: [string, string][];
  query: [string, string][];
}

type Kind = NonNullable<CredentialSend["kind"]>;
type Placer<K extends Kind> = (c: Extract<CredentialSend, { kind?: K }>, secret: string) => Placed;

const PLACE: { [K in Kind]: Placer<K> } = {
  header: (c, secret) => ({ headers: [[c.header, c.scheme ? `${c.scheme} ${secret}` : secret]], query: [] }),
  query: (c, secret) => ({ headers: [], query: [[c.param, secret]] }),
};

/** Where `secret` goes as `c` says. */
export const placeCredential = (c: CredentialSend, secret: string): Placed => (PLACE[c.kind ?? "header"] as Placer<Kind>)(c, secret);

/** The headers that carry `secret` as `c` says, for a client that sends headers only (the CLI); a kind that needs more is an error, never a request without its credential. */
export function credentialHeadersOf(c: CredentialSend, secret: string): Record<string, string> {
  const placed = placeCredential(c, secret);
  if (placed.query.length > 0) throw new Error(`a credential sent in the query needs more than headers`);
  return Object.fromEntries(placed.headers);
}
