/**
 * @module AWS Signature Version 4 (the `Authorization` header form, payload in one chunk) on
 * WebCrypto, for the gateway to sign an attempt to Bedrock with a pool member's IAM credentials.
 * Pure but for WebCrypto: the time is an argument. The steps are the IAM user guide's
 * (docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html): a
 * canonical request, a string to sign over its hash, a signature with a key derived from the
 * secret for one day, region and service.
 *
 * Bedrock needs no `x-amz-content-sha256` (S3 does): botocore adds it for S3 only, aws4fetch
 * (what the AI SDK's Bedrock provider signs with) never does, and both are answered by Bedrock.
 * The AWS JS SDK and Anthropic's Bedrock SDK send it anyway; `contentSha256` does the same.
 */

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  /** An STS session token: sent and signed as `x-amz-security-token`. */
  sessionToken?: string;
}

/** Headers as name/value pairs (a name may repeat: its values are joined with ","), or a record. */
export type HeaderList = Record<string, string> | Iterable<readonly [string, string]>;

export interface SignInput {
  method: string;
  /**
   * The URL as it goes on the wire (`new URL(u).href`): its path is signed as written there,
   * normalized and encoded once more (every service but S3 is signed so), its query decoded,
   * encoded and sorted.
   */
  url: string;
  /**
   * Headers to sign besides `host` and those the signer adds. Sign only what reaches AWS
   * unchanged (`content-type`, `x-amz-*`, `x-amzn-bedrock-*`): a header a proxy rewrites breaks the signature.
   */
  headers?: HeaderList;
  body?: Uint8Array | string;
  region: string;
  /** `bedrock` for bedrock-runtime (its signing name). */
  service: string;
  credentials: AwsCredentials;
  /** Epoch ms: the signature's time (AWS refuses one more than 15 minutes off its clock). */
  now: number;
  /** Also send and sign `x-amz-content-sha256` (S3 needs it; Bedrock does not). */
  contentSha256?: boolean;
}

const ALGORITHM = "AWS4-HMAC-SHA256";
const enc = new TextEncoder();

/**
 * Headers never signed: hop-by-hop ones and those proxies rewrite (the list @smithy/signature-v4
 * keeps). A caller's `authorization` is never signed: it is what the signature replaces.
 */
const UNSIGNABLE = new Set([
  "authorization", "cache-control", "connection", "expect", "from", "keep-alive", "max-forwards", "pragma", "referer", "te",
  "trailer", "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
]);

const hex = (b: ArrayBuffer | Uint8Array) => Array.from(b instanceof Uint8Array ? b : new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
const bytes = (v: Uint8Array | string | undefined) => (v === undefined ? new Uint8Array() : typeof v === "string" ? enc.encode(v) : v);

export async function sha256Hex(data: Uint8Array | string | undefined): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", bytes(data)));
}

/** `20150830T123600Z`: the signature's time, ISO 8601 basic, UTC, whole seconds. */
export function amzDate(now: number): string {
  return new Date(Math.floor(now / 1000) * 1000).toISOString().replace(/[-:]|\.\d{3}/g, "");
}

/** RFC 3986 unreserved characters stay; every other byte is `%XX` (upper case); a space is `%20`. */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The raw path and query of a URL string, as written (no URL parsing, which would re-encode them). */
export function pathAndQuery(url: string): { path: string; query: string } {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)(?:\?([^#]*))?/i.exec(url);
  return { path: m?.[1] || "/", query: m?.[2] ?? "" };
}

/** The host a URL names (with its port when it has one), as the `host` header carries it. */
export function hostOf(url: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#]*)/i.exec(url)?.[1]?.toLowerCase() ?? "";
}

/** Dot segments removed and empty ones dropped (a trailing slash kept), then each byte encoded: `%3A` becomes `%253A`. */
export function canonicalPath(path: string): string {
  const out: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  const normal = `/${out.join("/")}${out.length > 0 && path.endsWith("/") ? "/" : ""}`;
  return uriEncode(normal).replace(/%2F/g, "/");
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Each name and value decoded, then encoded as SigV4 wants, sorted by name then value. */
export function canonicalQuery(query: string): string {
  const pairs: [string, string][] = [];
  for (const part of query.split("&")) {
    if (part === "") continue;
    const at = part.indexOf("=");
    const [k, v] = at < 0 ? [part, ""] : [part.slice(0, at), part.slice(at + 1)];
    pairs.push([uriEncode(decode(k)), uriEncode(decode(v))]);
  }
  pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join("&");
}

const entries = (h: HeaderList | undefined): Iterable<readonly [string, string]> =>
  h === undefined ? [] : Symbol.iterator in h ? (h as Iterable<readonly [string, string]>) : Object.entries(h);

/** Lower-case names, values trimmed with inner runs of blanks made one space, repeats joined by ",". */
export function canonicalHeaders(h: HeaderList | undefined, only?: ReadonlySet<string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of entries(h)) {
    const n = name.toLowerCase();
    if (only ? !only.has(n) : UNSIGNABLE.has(n)) continue;
    const v = value.replace(/[\r\n]/g, " ").replace(/[ \t]+/g, " ").trim();
    const was = out.get(n);
    out.set(n, was === undefined ? v : `${was},${v}`);
  }
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The canonical request: method, path, query, headers, the signed header names and the payload's hash. */
export function canonicalRequest(method: string, url: string, headers: Map<string, string>, payloadHash: string): string {
  const { path, query } = pathAndQuery(url);
  const lines = [...headers].map(([k, v]) => `${k}:${v}\n`).join("");
  return `${method.toUpperCase()}\n${canonicalPath(path)}\n${canonicalQuery(query)}\n${lines}\n${[...headers.keys()].join(";")}\n${payloadHash}`;
}

async function hmac(key: Uint8Array | CryptoKey, data: string): Promise<Uint8Array> {
  const k = key instanceof Uint8Array ? await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]) : key;
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(data)));
}

/** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
export async function deriveSigningKey(secret: string, date: string, region: string, service: string): Promise<Uint8Array> {
  let k = enc.encode(`AWS4${secret}`);
  for (const part of [date, region, service, "aws4_request"]) k = await hmac(k, part);
  return k;
}

/**
 * Derived keys by secret, day, region and service: four HMACs saved on every attempt of the day.
 * In this isolate's memory only (where the member's secret already is); a few entries, oldest out first.
 */
const KEYS = new Map<string, Promise<CryptoKey>>();
const KEYS_MAX = 32;

export function signingKey(secret: string, date: string, region: string, service: string): Promise<CryptoKey> {
  const id = `${secret}\n${date}\n${region}\n${service}`;
  let key = KEYS.get(id);
  if (!key) {
    key = deriveSigningKey(secret, date, region, service).then((raw) => crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
    key.catch(() => KEYS.delete(id));
    if (KEYS.size >= KEYS_MAX) KEYS.delete(KEYS.keys().next().value!);
    KEYS.set(id, key);
  }
  return key;
}

/** How many derived keys are held (for tests of the cache). */
export const signingKeysHeld = () => KEYS.size;

/** The hex signature of a canonical request, signed at `date` (amzDate) for `scope` (`date/region/service/aws4_request`). */
export async function signatureOf(canonical: string, date: string, region: string, service: string, secret: string): Promise<string> {
  const scope = `${date.slice(0, 8)}/${region}/${service}/aws4_request`;
  const toSign = `${ALGORITHM}\n${date}\n${scope}\n${await sha256Hex(canonical)}`;
  return hex(await hmac(await signingKey(secret, date.slice(0, 8), region, service), toSign));
}

/**
 * The headers to add to a request so that AWS accepts it: `authorization`, `x-amz-date`, and
 * `x-amz-security-token` (with a session token), `x-amz-content-sha256` when asked. Send the
 * request with exactly the URL, body and signed headers given here.
 */
export async function signRequest(i: SignInput): Promise<Record<string, string>> {
  const date = amzDate(i.now);
  const payloadHash = await sha256Hex(i.body);
  const added: Record<string, string> = { "x-amz-date": date };
  if (i.credentials.sessionToken) added["x-amz-security-token"] = i.credentials.sessionToken;
  if (i.contentSha256) added["x-amz-content-sha256"] = payloadHash;
  const given = [...entries(i.headers)].filter(([n]) => !/^(host|x-amz-date|x-amz-security-token|x-amz-content-sha256)$/i.test(n));
  const headers = canonicalHeaders([["host", hostOf(i.url)], ...given, ...Object.entries(added)]);
  const canonical = canonicalRequest(i.method, i.url, headers, payloadHash);
  const signature = await signatureOf(canonical, date, i.region, i.service, i.credentials.secretAccessKey);
  const scope = `${date.slice(0, 8)}/${i.region}/${i.service}/aws4_request`;
  const authorization = `${ALGORITHM} Credential=${i.credentials.accessKeyId}/${scope}, SignedHeaders=${[...headers.keys()].join(";")}, Signature=${signature}`;
  return { authorization, ...added };
}
