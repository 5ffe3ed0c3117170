/**
 * @module A Google service account key (the JSON key file) read and checked, and the signed JWT
 * assertion Google's server-to-server flow asks for, made with WebCrypto so it runs in workerd
 * (developers.google.com/identity/protocols/oauth2/service-account, "HTTP/REST": a JWT whose
 * header is `{"alg":"RS256","typ":"JWT"}` (with the key's id as `kid`), whose claims are `iss`
 * (the service account's email), `scope` (space-delimited), `aud` (the token endpoint), `iat` and
 * `exp` (at most one hour after `iat`), signed with RSA SHA-256 by the key's private key).
 *
 * Nothing here puts the private key in an error message: a malformed key is named by its field.
 */

/** The scope Vertex AI needs (cloud.google.com/vertex-ai/docs/authentication). */
export const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
/** Google's token endpoint: the `token_uri` of every key it issues, and the assertion's `aud`. */
export const GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token";
/** The longest lifetime Google accepts for an assertion ("a maximum of 1 hour after the issued time"). */
export const MAX_ASSERTION_SEC = 3600;

/** The fields of a key file the flow needs; the rest of the file (project_id, client_id, ...) is not read. */
export interface ServiceAccountKey {
  clientEmail: string;
  /** The PKCS#8 PEM, as in the file. Held only in memory; never logged, hashed or shown. */
  privateKey: string;
  privateKeyId: string;
  tokenUri: string;
}

/** Why a token could not be had. `malformed_key`: the key itself (a configuration error); `refused`: the token endpoint said no; `unreachable`/`bad_answer`: the endpoint failed. */
export type GoogleAuthFailure = "malformed_key" | "refused" | "unreachable" | "bad_answer";

export class GoogleAuthError extends Error {
  override name = "GoogleAuthError";
  readonly failure: GoogleAuthFailure;
  /** The token endpoint's status and OAuth `error` code, when it answered. */
  readonly status: number | undefined;
  readonly code: string | undefined;

  constructor(failure: GoogleAuthFailure, message: string, status?: number, code?: string) {
    super(message);
    this.failure = failure;
    this.status = status;
    this.code = code;
  }
}

/** A private key imported for signing (WebCrypto's CryptoKey, named so in workerd's types and Node's alike). */
export type Signer = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const malformed = (what: string) => new GoogleAuthError("malformed_key", `service account key: ${what}`);

const str = (o: Record<string, unknown>, field: string): string | null => (typeof o[field] === "string" && o[field] !== "" ? (o[field] as string) : null);

/**
 * The key file (its JSON text or the parsed object) checked field by field. `token_uri` defaults to
 * Google's; one that is not an http(s) URL is refused, as a `private_key` that is not a PKCS#8 PEM
 * (`-----BEGIN PRIVATE KEY-----`, as Google issues them).
 */
export function readServiceAccountKey(input: unknown): ServiceAccountKey {
  let json = input;
  if (typeof input === "string") {
    try {
      json = JSON.parse(input);
    } catch {
      throw malformed("not valid JSON");
    }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw malformed("expected the JSON object of a key file");
  const o = json as Record<string, unknown>;
  if (o.type !== undefined && o.type !== "service_account") throw malformed('"type" is not "service_account" (only service account keys mint tokens here)');
  const clientEmail = str(o, "client_email");
  if (!clientEmail || !/^[^\s@]{1,128}@[^\s@]{1,255}$/.test(clientEmail)) throw malformed('"client_email" is missing or not an email address');
  const privateKeyId = str(o, "private_key_id");
  if (!privateKeyId || privateKeyId.length > 128) throw malformed(`"private_key_id" is missing (key of ${clientEmail})`);
  const privateKey = str(o, "private_key");
  if (!privateKey) throw malformed(`"private_key" is missing (key of ${clientEmail})`);
  if (/-----BEGIN RSA PRIVATE KEY-----/.test(privateKey)) throw malformed(`"private_key" is PKCS#1 (BEGIN RSA PRIVATE KEY); Google's keys are PKCS#8 (BEGIN PRIVATE KEY) (key of ${clientEmail})`);
  if (!/-----BEGIN PRIVATE KEY-----[\s\S]+-----END PRIVATE KEY-----/.test(privateKey)) throw malformed(`"private_key" is not a PKCS#8 PEM (key of ${clientEmail})`);
  const tokenUri = str(o, "token_uri") ?? GOOGLE_TOKEN_URI;
  if (!isHttpUrl(tokenUri)) throw malformed(`"token_uri" is not an http(s) URL (key of ${clientEmail})`);
  return { clientEmail, privateKey, privateKeyId, tokenUri };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
}

/** The PEM's DER bytes. A key pasted into a variable often carries `\n` as two characters: read either way. */
function pemBytes(pem: string): Uint8Array<ArrayBuffer> {
  const body = pem.replace(/\\n/g, "\n").replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, "");
  const bin = atob(body);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The private key as a WebCrypto signing key, not extractable: once imported, nothing can read it back. */
export async function importSigner(key: ServiceAccountKey): Promise<Signer> {
  try {
    return await crypto.subtle.importKey("pkcs8", pemBytes(key.privateKey), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  } catch {
    // The runtime's own message may quote what it could not parse: say only which key.
    throw malformed(`"private_key" could not be read as an RSA key (key of ${key.clientEmail})`);
  }
}

const b64url = (bytes: Uint8Array): string => {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]!);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};
const jsonPart = (o: object) => b64url(new TextEncoder().encode(JSON.stringify(o)));

/** The claims of an assertion issued at `nowSec` for `scope`: valid for the hour Google allows. */
export function assertionClaims(key: ServiceAccountKey, scope: string, nowSec: number) {
  return { iss: key.clientEmail, scope, aud: key.tokenUri, iat: nowSec, exp: nowSec + MAX_ASSERTION_SEC };
}

/** The signed JWT (`header.claims.signature`, each base64url) that the token endpoint exchanges for an access token. */
export async function signAssertion(key: ServiceAccountKey, signer: Signer, scope: string, nowSec: number): Promise<string> {
  const input = `${jsonPart({ alg: "RS256", typ: "JWT", kid: key.privateKeyId })}.${jsonPart(assertionClaims(key, scope, nowSec))}`;
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", signer, new TextEncoder().encode(input));
  return `${input}.${b64url(new Uint8Array(signature))}`;
}
