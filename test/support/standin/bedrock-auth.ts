// Who a request to the stand-in Bedrock is: its account and region, from a SigV4 signature checked
// with the account's secret by @smithy/signature-v4 (the AWS SDK's own signer, never the gateway's
// src/providers/auth/sigv4.ts), or from a Bedrock API key sent as a bearer token.
//
// Refusals, as AWS answers them:
// - A wrong signature: 403 with `x-amzn-ErrorType: InvalidSignatureException:...coral.service/` and
//   `{"message":"The request signature we calculated does not match the signature you provided.
//   Check your AWS Secret Access Key and signing method. Consult the service documentation for
//   details."}`. The IAM user guide names this refusal `SignatureDoesNotMatch` with that message
//   (IAM/latest/UserGuide/reference_sigv-troubleshooting.html); bedrock-runtime, a restJson1
//   service, types it InvalidSignatureException (observed answer quoted in aws-beam/aws-erlang#161,
//   third party).
// - An unknown access key or session token: 403 `UnrecognizedClientException` "The security token
//   included in the request is invalid." (observed: vercel/ai#4163, Aider-AI/aider#1986, third party).
// - A signature over 15 minutes off: 403 InvalidSignatureException "Signature expired: ..." (AWS's
//   RequestExpired rule, IAM user guide "Elements of a signature"; wording observed, third party).
// - No credential: 403 `MissingAuthenticationTokenException` "Missing Authentication Token".
// - A bearer key without Bedrock's key prefix: 403 `{"Message":"Invalid API Key format: Must start
//   with pre-defined prefix"}`; a well-formed unknown one: 403 `{"Message":"Authentication failed:
//   Please make sure your API Key is valid."}` (both observed: farion1231/cc-switch#1679,
//   anomalyco/opencode#47073, third party; the SDKs name it AccessDeniedException, earendil-works/pi#6531).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { SignatureV4 } from "@smithy/signature-v4";
import type { BedrockOptions } from "./bedrock-options.ts";

export interface BedrockCaller {
  account: string;
  region: string;
  /** How it came: `sigv4` or `bearer`, and the access key id or API key (a test may compare it). */
  via: "sigv4" | "bearer";
  credential: string;
}

export interface AuthRefusal {
  status: number;
  type: string;
  /** `message`, or `Message` for the API-key refusals, which AWS spells so. */
  body: Record<string, string>;
  /** The error type's namespace in `x-amzn-ErrorType`. */
  namespace: "coral.service" | "bedrock";
}

const refuse = (type: string, message: string, key: "message" | "Message" = "message"): AuthRefusal => ({ status: 403, type, body: { [key]: message }, namespace: "coral.service" });

export const SIGNATURE_MISMATCH =
  "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";

const bytes = (d: string | ArrayBuffer | ArrayBufferView) =>
  typeof d === "string" ? d : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);

/** SHA-256 and HMAC-SHA256 from node:crypto in the shape @smithy/signature-v4 takes. */
class NodeSha256 {
  #h: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#h = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(d: string | ArrayBuffer | ArrayBufferView) {
    this.#h.update(bytes(d));
  }
  async digest() {
    return new Uint8Array(this.#h.digest());
  }
}

const header = (h: IncomingHttpHeaders, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v.join(",") : v;
};

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const SKEW_MS = 15 * 60_000;
const API_KEY_PREFIX = /^(ABSK|bedrock-api-key-)/;

/** `20150830T123600Z` as a Date. */
const amzDate = (d: string) => new Date(d.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));

/** The raw query as @smithy/signature-v4 takes it: names to decoded values. */
function queryOf(raw: string): Record<string, string | string[]> {
  const q: Record<string, string | string[]> = {};
  for (const part of raw.split("&").filter(Boolean)) {
    const [k, v = ""] = part.split(/=(.*)/s).map((x) => decodeURIComponent(x)) as [string, string?];
    const was = q[k];
    q[k] = was === undefined ? v : [...(Array.isArray(was) ? was : [was]), v];
  }
  return q;
}

async function sigv4(o: BedrockOptions, method: string, path: string, query: string, h: IncomingHttpHeaders, body: Buffer, hostRegion: string, now: number): Promise<BedrockCaller | AuthRefusal> {
  const m = AUTH.exec(header(h, "authorization")?.trim() ?? "");
  const date = header(h, "x-amz-date") ?? "";
  if (!m) return refuse("IncompleteSignatureException", "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.");
  const [, accessKeyId, day, region, service, signed, given] = m as unknown as [string, string, string, string, string, string, string];
  const account = o.accounts.find((a) => a.keys.some((k) => k.accessKeyId === accessKeyId));
  const key = account?.keys.find((k) => k.accessKeyId === accessKeyId);
  const token = header(h, "x-amz-security-token");
  if (!account || !key || (token ?? "") !== (key.sessionToken ?? "")) return refuse("UnrecognizedClientException", "The security token included in the request is invalid.");
  if (service !== "bedrock" || date.slice(0, 8) !== day) return refuse("InvalidSignatureException", SIGNATURE_MISMATCH);
  if (region !== hostRegion) return refuse("InvalidSignatureException", `Credential should be scoped to a valid region. `);
  const at = amzDate(date);
  if (Number.isNaN(at.getTime()) || Math.abs(now - at.getTime()) > SKEW_MS) {
    const fmt = (t: number) => new Date(t).toISOString().replace(/[-:]|\.\d{3}/g, "");
    return refuse("InvalidSignatureException", `Signature expired: ${date} is now earlier than ${fmt(now - SKEW_MS)} (${fmt(now)} - 15 min.)`);
  }
  // The request as the caller signed it: only the headers it lists, its body as received.
  const names = signed.split(";");
  const headers: Record<string, string> = {};
  for (const n of names) {
    const v = header(h, n);
    if (v === undefined) return refuse("InvalidSignatureException", SIGNATURE_MISMATCH);
    headers[n] = v;
  }
  const claimed = headers["x-amz-content-sha256"];
  if (claimed !== undefined && claimed !== createHash("sha256").update(body).digest("hex")) return refuse("InvalidSignatureException", SIGNATURE_MISMATCH);
  const signer = new SignatureV4({
    service: "bedrock", region, sha256: NodeSha256, applyChecksum: false,
    credentials: { accessKeyId, secretAccessKey: key.secretAccessKey, ...(token ? { sessionToken: token } : {}) },
  });
  const hostname = (headers.host ?? "").replace(/:\d+$/, "");
  const s = await signer.sign({ method, protocol: "http:", hostname, path, query: queryOf(query), headers, body: new Uint8Array(body) }, { signingDate: at, signingRegion: region, signingService: "bedrock" });
  const want = /Signature=([0-9a-f]{64})/.exec(String(s.headers.authorization))?.[1] ?? "";
  const same = want.length === given.length && timingSafeEqual(Buffer.from(want), Buffer.from(given));
  return same ? { account: account.id, region, via: "sigv4", credential: accessKeyId } : refuse("InvalidSignatureException", SIGNATURE_MISMATCH);
}

/** The caller of a request reaching `hostRegion`, or the refusal AWS would send. */
export async function bedrockCaller(
  o: BedrockOptions, method: string, path: string, query: string, h: IncomingHttpHeaders, body: Buffer, hostRegion: string, now = Date.now(),
): Promise<BedrockCaller | AuthRefusal> {
  const auth = header(h, "authorization")?.trim() ?? "";
  const bearer = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim();
  if (bearer !== undefined) {
    if (!API_KEY_PREFIX.test(bearer)) return refuse("AccessDeniedException", "Invalid API Key format: Must start with pre-defined prefix", "Message");
    const account = o.accounts.find((a) => a.apiKeys.includes(bearer));
    if (!account) return refuse("AccessDeniedException", "Authentication failed: Please make sure your API Key is valid.", "Message");
    return { account: account.id, region: hostRegion, via: "bearer", credential: bearer };
  }
  if (auth.startsWith("AWS4-HMAC-SHA256")) return sigv4(o, method, path, query, h, body, hostRegion, now);
  return refuse("MissingAuthenticationTokenException", "Missing Authentication Token");
}

export const isRefusal = (c: BedrockCaller | AuthRefusal): c is AuthRefusal => "status" in c;
