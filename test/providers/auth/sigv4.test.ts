import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import {
  canonicalHeaders, canonicalPath, canonicalQuery, canonicalRequest, deriveSigningKey, signingKeysHeld, signRequest, type SignInput,
} from "../../../src/providers/auth/sigv4";

/**
 * AWS's SigV4 test suite, transcribed from the copy AWS vendors in awslabs/aws-c-auth
 * (`tests/aws-signing-test-suite/v4/<name>/`: request.txt, context.json, header-signature.txt),
 * the suite AWS published at docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html.
 * Every case: AKIDEXAMPLE, secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, us-east-1, service
 * `service`, 2015-08-30T12:36:00Z, host example.amazonaws.com. Only the `normalize: true` cases
 * (every service but S3 normalizes its paths); a path is written as the request line has it.
 * `body` cases are the suite's `sign_body: true` ones (they sign x-amz-content-sha256).
 */
const SUITE: { name: string; method: string; path: string; headers?: [string, string][]; body?: string; token?: string; signature: string }[] = [
  { name: "get-vanilla", method: "GET", path: "/", signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
  { name: "post-vanilla", method: "POST", path: "/", signature: "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b" },
  { name: "get-vanilla-empty-query-key", method: "GET", path: "/?Param1=value1", signature: "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb" },
  { name: "get-vanilla-query-order-key-case", method: "GET", path: "/?Param2=value2&Param1=value1", signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500" },
  { name: "get-vanilla-query-order-encoded", method: "GET", path: "/?Param-3=Value3&Param=Value2&%E1%88%B4=Value1", signature: "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac" },
  {
    name: "get-vanilla-query-unreserved", method: "GET",
    path: "/?-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    signature: "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197",
  },
  { name: "get-vanilla-utf8-query", method: "GET", path: "/?\u1234=bar", signature: "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04" },
  { name: "get-unreserved", method: "GET", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", signature: "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f" },
  { name: "get-utf8", method: "GET", path: "/\u1234", signature: "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85" },
  { name: "get-space-normalized", method: "GET", path: "/example space/", signature: "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741" },
  { name: "get-slashes-normalized", method: "GET", path: "//example//", signature: "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84" },
  { name: "get-slash-normalized", method: "GET", path: "//", signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
  { name: "get-slash-dot-slash-normalized", method: "GET", path: "/./", signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
  { name: "get-slash-pointless-dot-normalized", method: "GET", path: "/./example", signature: "ef75d96142cf21edca26f06005da7988e4f8dc83a165a80865db7089db637ec5" },
  { name: "get-relative-normalized", method: "GET", path: "/example/..", signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
  { name: "get-relative-relative-normalized", method: "GET", path: "/example1/example2/../..", signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31" },
  {
    name: "get-header-key-duplicate", method: "GET", path: "/", headers: [["My-Header1", "value2"], ["My-Header1", "value2"], ["My-Header1", "value1"]],
    signature: "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
  },
  {
    name: "get-header-value-order", method: "GET", path: "/", headers: [["My-Header1", "value4"], ["My-Header1", "value1"], ["My-Header1", "value3"], ["My-Header1", "value2"]],
    signature: "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01",
  },
  { name: "get-header-value-trim", method: "GET", path: "/", headers: [["My-Header1", " value1"], ["My-Header2", ' "a   b   c"']], signature: "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736" },
  { name: "post-header-key-sort", method: "POST", path: "/", headers: [["My-Header1", "value1"]], signature: "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c" },
  { name: "post-header-value-case", method: "POST", path: "/", headers: [["My-Header1", "VALUE1"]], signature: "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d" },
  { name: "post-vanilla-query", method: "POST", path: "/?Param1=value1", signature: "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11" },
  {
    name: "post-x-www-form-urlencoded", method: "POST", path: "/", headers: [["Content-Type", "application/x-www-form-urlencoded"], ["Content-Length", "13"]], body: "Param1=value1",
    signature: "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b",
  },
  {
    name: "post-x-www-form-urlencoded-parameters", method: "POST", path: "/", headers: [["Content-Type", "application/x-www-form-urlencoded; charset=utf-8"], ["Content-Length", "13"]],
    body: "Param1=value1", signature: "328d1b9eaadca9f5818ef05e8392801e091653bafec24fcab71e7344e7f51422",
  },
  { name: "get-vanilla-with-session-token", method: "GET", path: "/", token: "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267", signature: "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8" },
  {
    name: "post-sts-header-before", method: "POST", path: "/",
    token: "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==",
    signature: "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead",
  },
];

const KEY = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const AT = Date.parse("2015-08-30T12:36:00Z");
const sig = (h: Record<string, string>) => /Signature=([0-9a-f]{64})$/.exec(h.authorization!)?.[1];

describe("SigV4: AWS's test suite", () => {
  for (const c of SUITE) {
    it(c.name, async () => {
      const h = await signRequest({
        method: c.method, url: `https://example.amazonaws.com${c.path}`, headers: c.headers, body: c.body, region: "us-east-1", service: "service",
        credentials: { ...KEY, ...(c.token ? { sessionToken: c.token } : {}) }, now: AT, contentSha256: c.body !== undefined,
      });
      expect(sig(h)).toBe(c.signature);
      expect(h["x-amz-date"]).toBe("20150830T123600Z");
      expect(h["x-amz-security-token"]).toBe(c.token);
      expect(h.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20150830\/us-east-1\/service\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=/);
    });
  }

  it("canonical requests as the suite writes them (get-header-value-trim, post-x-www-form-urlencoded)", () => {
    const trim = canonicalHeaders([["host", "example.amazonaws.com"], ["My-Header1", " value1"], ["My-Header2", ' "a   b   c"'], ["x-amz-date", "20150830T123600Z"]]);
    expect(canonicalRequest("GET", "https://example.amazonaws.com/", trim, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")).toBe(
      'GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:"a b c"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(canonicalQuery("Param-3=Value3&Param=Value2&%E1%88%B4=Value1")).toBe("%E1%88%B4=Value1&Param=Value2&Param-3=Value3");
  });
});

describe("SigV4: the worked examples of AWS's signing guide", () => {
  // The signing-key example (General Reference `sigv4-calculate-signature`, now the IAM user
  // guide's `reference_sigv-create-signed-request`): 2011-09-09, us-east-1, iam.
  it("derives the example signing key", async () => {
    const key = await deriveSigningKey(KEY.secretAccessKey, "20110909", "us-east-1", "iam");
    expect(Array.from(key, (b) => b.toString(16).padStart(2, "0")).join("")).toBe("98f1d889fec4f4421adc522bab0ce1f82e6929c262ed15e5a94c90efd1e3b0e7");
  });

  it("signs the example IAM ListUsers POST of 2011-09-09", async () => {
    const h = await signRequest({
      method: "POST", url: "http://iam.amazonaws.com/", headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      body: "Action=ListUsers&Version=2010-05-08", region: "us-east-1", service: "iam", credentials: KEY, now: Date.parse("2011-09-09T23:36:00Z"),
    });
    expect(h.authorization).toBe(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20110909/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ced6826de92d2bdeed8f846f0bf508e8559e98e4b0199114b84c54174deb456c",
    );
  });

  it("signs the example IAM ListUsers GET of 2015-08-30", async () => {
    const h = await signRequest({
      method: "GET", url: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", headers: { "Content-Type": "application/x-www-form-urlencoded; charset=utf-8" },
      region: "us-east-1", service: "iam", credentials: KEY, now: AT,
    });
    expect(sig(h)).toBe("5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7");
  });
});

/** SHA-256 (and HMAC-SHA256 with a secret) for @smithy/signature-v4, on WebCrypto, so it runs in workerd. */
class WebSha256 {
  #parts: Uint8Array[] = [];
  constructor(private secret?: Uint8Array | string) {}
  update(d: Uint8Array | string) {
    this.#parts.push(typeof d === "string" ? new TextEncoder().encode(d) : d);
  }
  async digest(): Promise<Uint8Array> {
    const data = new Uint8Array(await new Blob(this.#parts).arrayBuffer());
    if (this.secret === undefined) return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
    const raw = typeof this.secret === "string" ? new TextEncoder().encode(this.secret) : this.secret;
    const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    return new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
  }
}

/** Bedrock requests as the gateway will sign them, checked against @smithy/signature-v4 (what the AWS SDK signs with). */
describe("SigV4 for Bedrock, against @smithy/signature-v4", () => {
  const CASES: { model: string; canonical: string }[] = [
    { model: "anthropic.claude-haiku-4-5-20251001-v1:0", canonical: "/model/anthropic.claude-haiku-4-5-20251001-v1%253A0/invoke" },
    { model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", canonical: "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%253A0/invoke" },
    {
      model: "arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      canonical: "/model/arn%253Aaws%253Abedrock%253Aus-east-1%253A111122223333%253Ainference-profile%252Fus.anthropic.claude-sonnet-4-5-20250929-v1%253A0/invoke",
    },
  ];
  for (const { model, canonical } of CASES) {
    it(`${model}: the path is encoded twice, and the signature is the SDK's`, async () => {
      const path = `/model/${encodeURIComponent(model)}/invoke`;
      expect(canonicalPath(path)).toBe(canonical);
      const body = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 64, messages: [{ role: "user", content: "héllo" }] });
      const input: SignInput = {
        method: "POST", url: `https://bedrock-runtime.us-west-2.amazonaws.com${path}`, headers: { "content-type": "application/json", accept: "application/json" },
        body, region: "us-west-2", service: "bedrock", credentials: { accessKeyId: "AKIAEXAMPLE", secretAccessKey: "s3cr3t/Example+Key", sessionToken: "FwoGZXIvYXdzEXAMPLE//token" },
        now: Date.parse("2026-11-28T09:00:00Z"), contentSha256: true,
      };
      const ours = await signRequest(input);
      const smithy = new SignatureV4({ service: "bedrock", region: "us-west-2", credentials: input.credentials, sha256: WebSha256 as never });
      const theirs = await smithy.sign(
        { method: "POST", protocol: "https:", hostname: "bedrock-runtime.us-west-2.amazonaws.com", path, query: {}, headers: { host: "bedrock-runtime.us-west-2.amazonaws.com", "content-type": "application/json", accept: "application/json" }, body },
        { signingDate: new Date(input.now) },
      );
      expect(ours.authorization).toBe(theirs.headers.authorization);
      expect(ours["x-amz-content-sha256"]).toBe(theirs.headers["x-amz-content-sha256"]);
    });
  }

  it("never signs a header a proxy may rewrite, nor the caller's own authorization", async () => {
    const h = await signRequest({
      method: "POST", url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse",
      headers: [["User-Agent", "x"], ["authorization", "Bearer sgk-caller"], ["Content-Type", "application/json"], ["X-Amz-Date", "19990101T000000Z"]],
      body: "{}", region: "us-east-1", service: "bedrock", credentials: KEY, now: AT,
    });
    expect(h.authorization).toContain("SignedHeaders=content-type;host;x-amz-date,");
    expect(h["x-amz-date"]).toBe("20150830T123600Z");
  });

  it("keeps one derived key per secret, day, region and service", async () => {
    const base = { method: "POST", url: "https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/invoke", body: "{}", service: "bedrock", credentials: { accessKeyId: "A", secretAccessKey: `k-${Math.random()}` } };
    const before = signingKeysHeld();
    const a = await signRequest({ ...base, region: "eu-west-1", now: AT });
    await signRequest({ ...base, region: "eu-west-1", now: AT + 3_600_000 });
    expect(signingKeysHeld()).toBe(Math.min(32, before + 1));
    const b = await signRequest({ ...base, region: "eu-west-1", now: AT + 86_400_000 });
    expect(sig(a)).not.toBe(sig(b));
  });
});
