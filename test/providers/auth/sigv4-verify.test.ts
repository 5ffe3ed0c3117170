import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { signRequest } from "../../../src/providers/auth/sigv4";
import { type SignedRequest, verifySignature, type VerifyOptions } from "../../../src/providers/auth/sigv4-verify";

const NOW = Date.parse("2026-11-28T09:00:00Z");
const VK = "sgk-virtual-key-as-secret-0123456789";
const URL_ = "https://gateway.example.workers.dev/bedrock/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse";
const BODY = JSON.stringify({ messages: [{ role: "user", content: [{ text: "hi" }] }] });
const opts = (o: Partial<VerifyOptions> = {}): VerifyOptions => ({ service: "bedrock", now: NOW, secretOf: (id) => (id === "sgk-id" ? VK : null), ...o });

/** A request the way a caller's client sends it to the gateway: signed for the gateway's host with the virtual key as secret. */
async function signed(over: { secret?: string; now?: number; region?: string; id?: string } = {}): Promise<SignedRequest> {
  const headers = { "content-type": "application/json" };
  const added = await signRequest({
    method: "POST", url: URL_, headers, body: BODY, region: over.region ?? "us-east-1", service: "bedrock",
    credentials: { accessKeyId: over.id ?? "sgk-id", secretAccessKey: over.secret ?? VK }, now: over.now ?? NOW,
  });
  return { method: "POST", url: URL_, headers: new Headers({ host: "gateway.example.workers.dev", ...headers, ...added }), body: BODY };
}

describe("verifying a SigV4 signature made with a virtual key", () => {
  it("accepts the signature it was made with, naming the key and region", async () => {
    expect(await verifySignature(await signed(), opts())).toEqual({ ok: true, accessKeyId: "sgk-id", region: "us-east-1" });
  });

  it("refuses a wrong secret, a changed body, a changed signed header, an added path segment", async () => {
    expect(await verifySignature(await signed({ secret: `${VK}x` }), opts())).toEqual({ ok: false, refusal: "mismatch" });
    const r = await signed();
    expect(await verifySignature({ ...r, body: BODY.replace("hi", "ho") }, opts())).toEqual({ ok: false, refusal: "mismatch" });
    const h = new Headers(r.headers as Headers);
    h.set("content-type", "text/plain");
    expect(await verifySignature({ ...r, headers: h }, opts())).toEqual({ ok: false, refusal: "mismatch" });
    expect(await verifySignature({ ...r, url: URL_.replace("/converse", "/converse-stream") }, opts())).toEqual({ ok: false, refusal: "mismatch" });
  });

  it("refuses an unknown key id, a signature over 15 minutes off, another service or region, and no signature", async () => {
    expect(await verifySignature(await signed({ id: "AKIAOTHER" }), opts())).toEqual({ ok: false, refusal: "unknown_key" });
    expect(await verifySignature(await signed({ now: NOW - 16 * 60_000 }), opts())).toEqual({ ok: false, refusal: "expired" });
    expect(await verifySignature(await signed({ now: NOW + 16 * 60_000 }), opts())).toEqual({ ok: false, refusal: "expired" });
    expect((await verifySignature(await signed({ now: NOW - 14 * 60_000 }), opts())).ok).toBe(true);
    expect(await verifySignature(await signed({ region: "eu-west-1" }), opts({ region: "us-east-1" }))).toEqual({ ok: false, refusal: "scope" });
    expect(await verifySignature(await signed(), opts({ service: "s3" }))).toEqual({ ok: false, refusal: "scope" });
    expect(await verifySignature({ method: "POST", url: URL_, headers: { host: "h", authorization: "Bearer sgk-x" } }, opts())).toEqual({ ok: false, refusal: "incomplete" });
  });

  it("accepts what @smithy/signature-v4 (the AWS SDK's signer) signs, x-amz-content-sha256 and session token included", async () => {
    const signer = new SignatureV4({
      service: "bedrock", region: "us-east-1", credentials: { accessKeyId: "sgk-id", secretAccessKey: VK, sessionToken: "tok" },
      sha256: class {
        #d: Uint8Array[] = [];
        constructor(private k?: string | Uint8Array) {}
        update(x: Uint8Array | string) {
          this.#d.push(typeof x === "string" ? new TextEncoder().encode(x) : x);
        }
        async digest() {
          const data = new Uint8Array(await new Blob(this.#d).arrayBuffer());
          if (this.k === undefined) return new Uint8Array(await crypto.subtle.digest("SHA-256", data));
          const raw = typeof this.k === "string" ? new TextEncoder().encode(this.k) : this.k;
          return new Uint8Array(await crypto.subtle.sign("HMAC", await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]), data));
        }
      } as never,
    });
    const path = new URL(URL_).pathname;
    const s = await signer.sign(
      { method: "POST", protocol: "https:", hostname: "gateway.example.workers.dev", path, query: {}, headers: { host: "gateway.example.workers.dev", "content-type": "application/json" }, body: BODY },
      { signingDate: new Date(NOW) },
    );
    const req = { method: "POST", url: URL_, headers: Object.entries(s.headers as Record<string, string>), body: BODY };
    expect(await verifySignature(req, opts())).toMatchObject({ ok: true });
    // Its x-amz-content-sha256 is signed: a body swapped under it is refused.
    expect(await verifySignature({ ...req, body: "{}" }, opts())).toEqual({ ok: false, refusal: "mismatch" });
  });
});
