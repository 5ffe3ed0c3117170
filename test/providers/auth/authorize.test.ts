// A pool member's token made ready before its attempt takes a slot (authorize.ts `prepare`): the
// mint happens then, not between the grant and the send, and a mint that failed there fails the
// attempt's `authorize` once, never minting twice. The isolate's token endpoint is global `fetch`,
// spied on here.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { tokenAuthorizer } from "../../../src/providers/auth/authorize";
import { readServiceAccountKey, type ServiceAccountKey } from "../../../src/providers/auth/service-account";

const ALG = { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" };

async function keyFile(email: string): Promise<ServiceAccountKey> {
  const pair = (await crypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const der = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const pem = `-----BEGIN PRIVATE KEY-----\n${btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n")}\n-----END PRIVATE KEY-----\n`;
  return readServiceAccountKey({
    type: "service_account", project_id: "proj-a", private_key_id: "0123456789abcdef0123456789abcdef01234567", private_key: pem,
    client_email: email, client_id: "100000000000000000001", token_uri: "https://oauth2.example.test/token",
  });
}

let good: ServiceAccountKey;
let refused: ServiceAccountKey;

beforeAll(async () => {
  good = await keyFile("ready@proj-a.iam.gserviceaccount.com");
  refused = await keyFile("revoked@proj-a.iam.gserviceaccount.com");
});

afterEach(() => vi.restoreAllMocks());

/** The token endpoint: a token for `ready@`, a refusal for anyone else; counts its posts. */
function endpoint() {
  const posts: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
    const assertion = new URLSearchParams(String(init?.body)).get("assertion") ?? "";
    const claims = JSON.parse(atob(assertion.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))) as { iss: string };
    posts.push(claims.iss);
    return claims.iss.startsWith("ready@")
      ? Response.json({ access_token: `tok-${posts.length}`, expires_in: 3599, token_type: "Bearer" })
      : Response.json({ error: "invalid_grant", error_description: "Invalid JWT Signature." }, { status: 400 });
  });
  return posts;
}

describe("tokenAuthorizer", () => {
  it("prepare mints the token before the slot; authorize then only puts it on", async () => {
    const posts = endpoint();
    const a = tokenAuthorizer(good);
    await a.prepare!();
    expect(posts).toHaveLength(1);
    const headers = new Headers();
    await a.authorize("POST", new URL("https://us-east5-aiplatform.googleapis.com/v1/x"), headers, null);
    expect(posts, "no mint between the grant and the send").toHaveLength(1);
    expect(headers.get("authorization")).toBe("Bearer tok-1");
  });

  it("a mint that fails in prepare fails the attempt's authorize once, and the next attempt mints again", async () => {
    const posts = endpoint();
    const a = tokenAuthorizer(refused);
    await expect(a.prepare!()).resolves.toBeUndefined();
    await expect(a.authorize("POST", new URL("https://x.test/"), new Headers(), null)).rejects.toThrow(/refused service account revoked@/);
    expect(posts, "minted once for the attempt").toHaveLength(1);
    // Without a prepare, authorize mints (and fails) itself.
    await expect(a.authorize("POST", new URL("https://x.test/"), new Headers(), null)).rejects.toThrow(/invalid_grant/);
    expect(posts).toHaveLength(2);
  });
});
