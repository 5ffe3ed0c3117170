/**
 * @module Checks a SigV4 signature a caller made, as AWS does: for a gateway that lets a
 * virtual key sign like an IAM key (the AWS SDKs can only sign, so a caller keeping its AWS client
 * sets its access key id and secret to the virtual key's). The answer says why a signature fails
 * in AWS's terms, so the refusal can look like AWS's. Pure but for WebCrypto; the time is an argument.
 */
import { safeEqual } from "../../auth";
import { amzDate, canonicalHeaders, canonicalRequest, type HeaderList, sha256Hex, signatureOf } from "./sigv4";

/** AWS refuses a signature made more than 15 minutes from its clock (`Signature expired` / `not yet current`). */
export const SKEW_MS = 15 * 60_000;

export interface SignedRequest {
  method: string;
  /** As received: `request.url`. */
  url: string;
  /** As received, `host` included (a `Headers` object is iterable). */
  headers: HeaderList;
  body?: Uint8Array | string;
}

export type Refusal =
  /** No `authorization`, or not a SigV4 one: AWS's `MissingAuthenticationToken` / `IncompleteSignature`. */
  | "incomplete"
  /** An access key id nobody holds: `UnrecognizedClientException`. */
  | "unknown_key"
  /** Dated more than SKEW_MS from now: `InvalidSignatureException` "Signature expired". */
  | "expired"
  /** Scoped to another service or region than this endpoint's. */
  | "scope"
  /** The signature does not match (a wrong secret, or a request changed after signing): `SignatureDoesNotMatch`. */
  | "mismatch";

export type Verdict = { ok: true; accessKeyId: string; region: string } | { ok: false; refusal: Refusal };

export interface VerifyOptions {
  /** The signing name this endpoint answers to (`bedrock`). */
  service: string;
  /** The region this endpoint is in, when it has one: a signature scoped to another is refused. */
  region?: string;
  now: number;
  /** The secret of an access key id, or null for none. */
  secretOf: (accessKeyId: string) => Promise<string | null> | string | null;
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

const headerOf = (h: HeaderList, name: string): string | undefined => {
  for (const [k, v] of Symbol.iterator in h ? (h as Iterable<readonly [string, string]>) : Object.entries(h)) if (k.toLowerCase() === name) return v;
  return undefined;
};

/** Epoch ms of an `x-amz-date` (`20150830T123600Z`), or NaN. */
const dateMs = (d: string) => Date.parse(d.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));

/** Whether `r` carries a valid SigV4 signature, and whose. */
export async function verifySignature(r: SignedRequest, o: VerifyOptions): Promise<Verdict> {
  const m = AUTH.exec(headerOf(r.headers, "authorization")?.trim() ?? "");
  const date = headerOf(r.headers, "x-amz-date") ?? "";
  if (!m) return { ok: false, refusal: "incomplete" };
  const [, accessKeyId, day, region, service, signed, given] = m as unknown as string[];
  const names = new Set(signed!.split(";"));
  if (!names.has("host") || !names.has("x-amz-date") || date.slice(0, 8) !== day || Number.isNaN(dateMs(date))) return { ok: false, refusal: "incomplete" };
  if (service !== o.service || (o.region !== undefined && region !== o.region)) return { ok: false, refusal: "scope" };
  const secret = await o.secretOf(accessKeyId!);
  if (secret === null) return { ok: false, refusal: "unknown_key" };
  if (Math.abs(o.now - dateMs(date)) > SKEW_MS) return { ok: false, refusal: "expired" };
  const payloadHash = await sha256Hex(r.body);
  const claimed = headerOf(r.headers, "x-amz-content-sha256");
  if (claimed !== undefined && names.has("x-amz-content-sha256") && claimed !== payloadHash) return { ok: false, refusal: "mismatch" };
  const headers = canonicalHeaders(r.headers, names);
  if (headers.size !== names.size) return { ok: false, refusal: "mismatch" };
  const want = await signatureOf(canonicalRequest(r.method, r.url, headers, payloadHash), amzDate(dateMs(date)), region!, service!, secret);
  return (await safeEqual(given!, want)) ? { ok: true, accessKeyId: accessKeyId!, region: region! } : { ok: false, refusal: "mismatch" };
}
