/**
 * @module How a credential goes upstream, by the kind its flavour row names (flavour.ts
 * `CredentialSend`): one entry per kind, no branch per provider. A header or query credential is
 * placed once; a signed (SigV4) or minted (a service account's OAuth token) one is made for each
 * attempt, over its final URL and body (providers/auth/).
 */
import type { CredentialSend } from "./flavour";

/** Where a credential goes: headers to set, query parameters to set. */
export interface Placed {
  headers: [string, string][];
  query: [string, string][];
}

/** The kinds placed once: a secret in a header or the query. */
export type PlacedSend = Extract<CredentialSend, { kind?: "header" } | { kind: "query" }>;
/** The kinds made for each attempt by the gateway. */
export type MadeSend = Exclude<CredentialSend, PlacedSend>;

export const isMade = (c: CredentialSend): c is MadeSend => c.kind === "sigv4" || c.kind === "service-account";

/** Where `secret` goes as `c` says. */
export const placeCredential = (c: PlacedSend, secret: string): Placed =>
  c.kind === "query" ? { headers: [], query: [[c.param, secret]] } : { headers: [[c.header, c.scheme ? `${c.scheme} ${secret}` : secret]], query: [] };

/** A row's kinds, in order. */
export const kindsOf = (send: CredentialSend | readonly CredentialSend[]): readonly CredentialSend[] => (Array.isArray(send) ? send : [send as CredentialSend]);

/** The secrets a kind needs by name (one `secret` for the kinds that take a single one). */
export const secretsOf = (c: CredentialSend): readonly string[] => (c.kind === "sigv4" ? c.secrets : ["secret"]);

/**
 * The kind a member uses: the first of its row's whose secrets it gives (`given`: the names of
 * the secrets its POOLS entry names; a single `secret` is `["secret"]`); null when none fits.
 */
export function sendFor(send: CredentialSend | readonly CredentialSend[], given: readonly string[]): CredentialSend | null {
  return kindsOf(send).find((c) => secretsOf(c).every((s) => given.includes(s)) && given.every((g) => secretsOf(c).includes(g) || (c.kind === "sigv4" && (c.optional ?? []).includes(g)))) ?? null;
}

/** The headers that carry `secret` as `send`'s first kind says, for a client that sends headers only (the CLI); any other kind is an error, never a request without its credential. */
export function credentialHeadersOf(send: CredentialSend | readonly CredentialSend[], secret: string): Record<string, string> {
  const c = kindsOf(send)[0]!;
  if (isMade(c)) throw new Error("a credential the gateway signs or mints cannot be sent as a header");
  const placed = placeCredential(c, secret);
  if (placed.query.length > 0) throw new Error(`a credential sent in the query needs more than headers`);
  return Object.fromEntries(placed.headers);
}
