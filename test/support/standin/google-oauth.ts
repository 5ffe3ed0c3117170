// Google's OAuth token endpoint for service accounts, and the access tokens it issues, as the
// Vertex routes check them (vertex.ts). The stand-in makes each service account's key pair and
// hands tests the key file, whose `token_uri` is this endpoint (`POST <stand-in>/token`).
//
// Sources:
// - The flow: developers.google.com/identity/protocols/oauth2/service-account, "HTTP/REST": a
//   form POST `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`; the JWT's
//   header `{"alg":"RS256","typ":"JWT"}` (and the key's `kid`), claims `iss` (the account's email),
//   `scope`, `aud` ("always https://oauth2.googleapis.com/token"), `iat`, `exp` (at most an hour
//   after iat), signed RSA SHA-256; the answer `{"access_token", "expires_in", "token_type":
//   "Bearer"}` (3599 s as Google's tokens come, 3600 in the page's example). The key file's fields
//   (type, project_id, private_key_id, private_key, client_email, client_id, auth_uri, token_uri,
//   ..., universe_domain) as the Cloud console downloads them.
// - Refusals (RFC 6749 section 5.2: 400 `{"error", "error_description"}`): `invalid_grant` "Invalid
//   JWT Signature." (a wrong or deleted key), "Invalid JWT: Token must be a short-lived token (60
//   minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
//   (googleapis/python-api-core#384, third party), "Invalid grant: account not found", `invalid_scope`
//   "Empty or missing scope not allowed.", `unsupported_grant_type` "Invalid grant_type: ..." (as
//   clients quote them, third party). A bad audience's wording is the stand-in's.
// - The aud: this endpoint's own URL, or Google's (google-auth-library signs for
//   https://oauth2.googleapis.com/token whatever the key's token_uri says, and tests send its post
//   here), or the older https://www.googleapis.com/oauth2/v4/token.
// - A token an API refuses: 401 UNAUTHENTICATED "Request had invalid authentication credentials.
//   Expected OAuth 2 access token, ..." with an ErrorInfo reason ACCESS_TOKEN_EXPIRED (expired) or
//   ACCESS_TOKEN_TYPE_UNSUPPORTED (not a token Google issued); 403 PERMISSION_DENIED with
//   ACCESS_TOKEN_SCOPE_INSUFFICIENT "Request had insufficient authentication scopes.", or
//   IAM_PERMISSION_DENIED "Permission '...' denied on resource '...' (or it may not exist)." for a
//   project the account has no role in (cloud.google.com/apis/design/errors for ErrorInfo and its
//   reasons; the messages as observed, e.g. googleapis/python-api-core#384, rohitaryal/imageFX-api#2,
//   third party).
import { generateKeyPairSync, randomBytes, verify } from "node:crypto";
import type { KeyObject } from "node:crypto";
import type { ErrorReply } from "./dialect.ts";
import { googleError } from "./google.ts";
import type { StatsRecorder } from "./stats.ts";

export const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
const GOOGLE_AUDIENCES = ["https://oauth2.googleapis.com/token", "https://www.googleapis.com/oauth2/v4/token"];
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/** Clock skew tolerated on `iat` (a client's clock a little ahead). */
const SKEW_SEC = 300;
const SIGNIN = "See https://developers.google.com/identity/sign-in/web/devconsole-project.";

/** A service account key file, as the Cloud console downloads it. */
export interface ServiceAccountFile {
  type: "service_account";
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
  auth_provider_x509_cert_url: string;
  client_x509_cert_url: string;
  universe_domain: string;
}

export interface ServiceAccountSpec {
  /** The project the account belongs to (its email's domain) and may call. */
  project: string;
  /** The part before `@`; default `standin-<n>`. */
  name?: string;
  /** Every project the account holds a Vertex role in; default its own. */
  projects?: string[];
}

interface Account {
  email: string;
  projects: Set<string>;
  /** Public keys by key id: a second key for the same account is another entry. */
  keys: Map<string, KeyObject>;
}

interface Issued {
  account: Account;
  scopes: Set<string>;
  expiresAt: number;
}

/** A token endpoint's answer. */
export interface TokenReply {
  status: number;
  body: unknown;
}

export class GoogleIssuer {
  readonly #accounts = new Map<string, Account>();
  readonly #tokens = new Map<string, Issued>();
  readonly #stats: StatsRecorder;
  readonly #tokenUri: () => string;
  #made = 0;

  constructor(stats: StatsRecorder, tokenUri: () => string) {
    this.#stats = stats;
    this.#tokenUri = tokenUri;
  }

  /** A new key pair for the account (made if new): its key file, whose token_uri is this endpoint. */
  serviceAccount(spec: ServiceAccountSpec): ServiceAccountFile {
    const name = spec.name ?? `standin-${++this.#made}`;
    const email = `${name}@${spec.project}.iam.gserviceaccount.com`;
    const account = this.#accounts.get(email) ?? { email, projects: new Set<string>(), keys: new Map<string, KeyObject>() };
    for (const p of spec.projects ?? [spec.project]) account.projects.add(p);
    this.#accounts.set(email, account);
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const kid = randomBytes(20).toString("hex");
    account.keys.set(kid, publicKey);
    return {
      type: "service_account", project_id: spec.project, private_key_id: kid,
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      client_email: email, client_id: String(100_000_000_000_000_000_000n + BigInt(this.#made)),
      auth_uri: "https://accounts.google.com/o/oauth2/auth", token_uri: this.#tokenUri(),
      auth_provider_x509_cert_url: "https://www.googleapis.com/oauth2/v1/certs",
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
      universe_domain: "googleapis.com",
    };
  }

  /** Deletes a key (as the console's "delete key"): assertions it signs are refused from now on. */
  deleteKey(email: string, kid: string): void {
    this.#accounts.get(email)?.keys.delete(kid);
  }

  /** `POST /token`: an access token for a valid assertion, else the OAuth refusal. `lifetimeSec` is the token's. */
  exchange(form: URLSearchParams, lifetimeSec: number, now = Date.now()): TokenReply {
    const refuse = (error: string, description: string): TokenReply => {
      this.#stats.oauth("refused");
      return { status: 400, body: { error, error_description: description } };
    };
    const grant = form.get("grant_type");
    if (grant !== JWT_BEARER) return refuse("unsupported_grant_type", `Invalid grant_type: ${(grant ?? "").slice(0, 100)}`);
    const assertion = form.get("assertion");
    if (!assertion) return refuse("invalid_request", "Missing required parameter: assertion");
    const parts = assertion.split(".");
    const header = decode(parts[0]);
    const claims = decode(parts[1]);
    if (parts.length !== 3 || !header || !claims || header.alg !== "RS256") return refuse("invalid_grant", "Invalid JWT: the assertion is not an RS256 JWT.");
    const account = typeof claims.iss === "string" ? this.#accounts.get(claims.iss) : undefined;
    if (!account) return refuse("invalid_grant", "Invalid grant: account not found");
    const keys = typeof header.kid === "string" ? [account.keys.get(header.kid)].filter((k) => k !== undefined) : [...account.keys.values()];
    const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
    const signature = Buffer.from(parts[2]!, "base64url");
    if (!keys.some((k) => verify("sha256", signed, k, signature))) return refuse("invalid_grant", "Invalid JWT Signature.");
    if (typeof claims.aud !== "string" || ![this.#tokenUri(), ...GOOGLE_AUDIENCES].includes(claims.aud)) {
      return refuse("invalid_grant", "Invalid JWT: the aud claim is not this token endpoint.");
    }
    const { iat, exp } = claims;
    const nowSec = now / 1000;
    if (typeof iat !== "number" || typeof exp !== "number" || exp - iat > 3600 || exp <= nowSec || iat > nowSec + SKEW_SEC) {
      return refuse("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.");
    }
    const scopes = typeof claims.scope === "string" ? claims.scope.split(/\s+/).filter(Boolean) : [];
    if (scopes.length === 0) return refuse("invalid_scope", "Empty or missing scope not allowed.");
    const token = `ya29.c.${randomBytes(48).toString("base64url")}`;
    this.#tokens.set(token, { account, scopes: new Set(scopes), expiresAt: now + lifetimeSec * 1000 });
    this.#stats.oauth("issued");
    return { status: 200, body: { access_token: token, expires_in: lifetimeSec, token_type: "Bearer" } };
  }

  /**
   * Whether `token` may call `method` on `resource` (`projects/<p>/locations/<l>/publishers/...`)
   * of `project`: null, or Google's 401 or 403.
   */
  check(token: string, project: string, resource: string, method: string, now = Date.now()): ErrorReply | null {
    const issued = this.#tokens.get(token);
    const info = (reason: string) => ({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com", metadata: { service: "aiplatform.googleapis.com", method } });
    if (!issued || now >= issued.expiresAt) {
      this.#stats.oauth(issued ? "expired" : "unknown");
      const message = `Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. ${SIGNIN}`;
      return { status: 401, body: googleError(401, message, [info(issued ? "ACCESS_TOKEN_EXPIRED" : "ACCESS_TOKEN_TYPE_UNSUPPORTED")]) };
    }
    if (!issued.scopes.has(CLOUD_PLATFORM)) return { status: 403, body: googleError(403, "Request had insufficient authentication scopes.", [info("ACCESS_TOKEN_SCOPE_INSUFFICIENT")]) };
    if (!issued.account.projects.has(project)) {
      const message = `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`;
      return { status: 403, body: googleError(403, message, [{ ...info("IAM_PERMISSION_DENIED"), metadata: { permission: "aiplatform.endpoints.predict", resource } }]) };
    }
    return null;
  }

  /** Every token issued so far expires now (a test's way to expire them mid-run without waiting). */
  expireAll(now = Date.now()): void {
    for (const t of this.#tokens.values()) t.expiresAt = Math.min(t.expiresAt, now);
  }
}

/** The 401 for a request that carried no Bearer token at all. */
export const missingCredential = (method: string): ErrorReply => ({
  status: 401,
  body: googleError(401, `Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. ${SIGNIN}`, [
    { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "CREDENTIALS_MISSING", domain: "googleapis.com", metadata: { service: "aiplatform.googleapis.com", method } },
  ]),
});

function decode(part: string | undefined): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(part ?? "", "base64url").toString("utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
