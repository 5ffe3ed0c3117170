// The Vertex stand-in's own Google token endpoint and the tokens it checks, driven by the gateway's
// token minter (src/providers/auth/access-tokens.ts) as the request path will use it: the stand-in
// verifies each assertion's RS256 signature with the public half of the service account key it
// made, refuses what Google refuses, and its Vertex routes refuse a token that expired, that it
// never issued, that lacks the scope, or whose account has no role in the path's project.
import { createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import { GoogleAuthError, readServiceAccountKey } from "../../src/providers/auth/service-account";
import { GoogleTokens } from "../../src/providers/auth/access-tokens";
import type { ServiceAccountFile, Standin } from "../support/standin/index.ts";
import { standin } from "./standin-helpers.ts";
import { claudeBody, claudePath, geminiBody, geminiPath, vertexPost } from "./vertex-helpers.ts";

const CLAUDE = "claude-haiku-4-5@20251001";
const minter = () => new GoogleTokens({ fetch: (u, i) => fetch(u, i), now: Date.now });

/** The token endpoint's answer to a form post. */
async function tokenPost(s: Standin, form: Record<string, string>) {
  const res = await fetch(`${s.url}/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** An assertion signed by hand with `claims` over the usual ones, for the refusals the minter never provokes. */
function assertion(key: ServiceAccountFile, claims: Record<string, unknown> = {}, privateKey = key.private_key): string {
  const now = Math.floor(Date.now() / 1000);
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const input = `${enc({ alg: "RS256", typ: "JWT", kid: key.private_key_id })}.${enc({ iss: key.client_email, scope: "https://www.googleapis.com/auth/cloud-platform", aud: key.token_uri, iat: now, exp: now + 3600, ...claims })}`;
  return `${input}.${sign("sha256", Buffer.from(input), createPrivateKey(privateKey)).toString("base64url")}`;
}
const grant = (a: string) => ({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: a });

describe("the gateway's minter against the stand-in's token endpoint", () => {
  it("mints a token the Vertex routes take, keeps it, and after a 401 for it mints the next: no request fails", async () => {
    const s = await standin();
    const key = readServiceAccountKey(s.serviceAccount({ project: "proj-m" }));
    const tokens = minter();
    // What the request path will do: take the token, and on a 401 drop it and go once more.
    const call = async () => {
      for (let attempt = 0; ; attempt++) {
        const token = await tokens.token(key);
        const r = await vertexPost(s, claudePath("proj-m", "us-east5", CLAUDE), token, claudeBody());
        if (r.status !== 401 || attempt > 0) return r.status;
        tokens.refuse(key, token);
      }
    };
    expect([await call(), await call()]).toEqual([200, 200]);
    expect(s.stats().oauth.issued).toBe(1);
    s.expireTokens();
    expect(await call()).toBe(200);
    expect(s.stats().oauth).toMatchObject({ issued: 2, expired: 1 });
    expect(s.stats().log.map((a) => a.status)).toEqual([200, 200, 401, 200]);
  });

  it("tokens that live 2 s are replaced before they expire, mid-run, and every request is answered", async () => {
    const s = await standin({ tokenLifetimeSec: 2, latencyMs: 40 });
    const key = readServiceAccountKey(s.serviceAccount({ project: "proj-m" }));
    const tokens = minter();
    const until = Date.now() + 4_500;
    const statuses: number[] = [];
    while (Date.now() < until) {
      const t = await tokens.token(key);
      statuses.push((await vertexPost(s, geminiPath("proj-m", "global", "gemini-2.5-flash"), t, geminiBody())).status);
    }
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect(s.stats().oauth.issued).toBeGreaterThanOrEqual(3); // one a second: half of each token's life
    expect(s.stats().oauth.expired).toBe(0);
  });

  it("a key whose private key is not the account's: 400 invalid_grant, a clear error without the key", async () => {
    const s = await standin();
    const file = s.serviceAccount({ project: "proj-m" });
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const e = await minter().token(readServiceAccountKey({ ...file, private_key: stranger })).then(String, (err: unknown) => err) as GoogleAuthError;
    expect(e).toBeInstanceOf(GoogleAuthError);
    expect({ failure: e.failure, status: e.status, code: e.code }).toEqual({ failure: "refused", status: 400, code: "invalid_grant" });
    expect(e.message).toBe(`token endpoint ${new URL(s.url).host} refused service account ${file.client_email} (400): invalid_grant: Invalid JWT Signature.`);
    for (const pem of [stranger, file.private_key]) expect(e.message).not.toContain(pem.split("\n")[1]!);
    expect(s.stats().oauth).toMatchObject({ issued: 0, refused: 1 });
  });
});

describe("the token endpoint refuses what Google refuses", () => {
  it("a signature by another key, a deleted key, an unknown account, a lifetime over an hour, another audience, no scope, another grant", async () => {
    const s = await standin();
    const key = s.serviceAccount({ project: "proj-o", name: "evals" });
    expect((await tokenPost(s, grant(assertion(key)))).status).toBe(200);
    const other = s.serviceAccount({ project: "proj-o", name: "other" });
    const cases: [Record<string, string>, number, Record<string, unknown>][] = [
      [grant(assertion(key, {}, other.private_key)), 400, { error: "invalid_grant", error_description: "Invalid JWT Signature." }],
      [grant(assertion({ ...key, client_email: "ghost@proj-o.iam.gserviceaccount.com" })), 400, { error: "invalid_grant", error_description: "Invalid grant: account not found" }],
      [grant(assertion(key, { exp: Math.floor(Date.now() / 1000) + 7200 })), 400, { error: "invalid_grant", error_description: "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim." }],
      [grant(assertion(key, { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })), 400, { error: "invalid_grant" }],
      [grant(assertion(key, { aud: "https://example.test/token" })), 400, { error: "invalid_grant" }],
      [grant(assertion(key, { scope: "" })), 400, { error: "invalid_scope", error_description: "Empty or missing scope not allowed." }],
      [{ grant_type: "client_credentials" }, 400, { error: "unsupported_grant_type", error_description: "Invalid grant_type: client_credentials" }],
      [{ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: "not.a.jwt" }, 400, { error: "invalid_grant" }],
    ];
    for (const [form, status, body] of cases) {
      const r = await tokenPost(s, form);
      expect([r.status, r.json]).toMatchObject([status, body]);
    }
    // Google's own audience is taken too (google-auth-library always signs for it).
    expect((await tokenPost(s, grant(assertion(key, { aud: "https://oauth2.googleapis.com/token" })))).status).toBe(200);
    s.deleteKey(key.client_email, key.private_key_id);
    expect((await tokenPost(s, grant(assertion(key)))).json).toEqual({ error: "invalid_grant", error_description: "Invalid JWT Signature." });
    expect(s.stats().oauth).toMatchObject({ issued: 2, refused: 9 });
  });

  it("issues opaque Bearer tokens with the lifetime the test sets", async () => {
    const s = await standin({ tokenLifetimeSec: 42 });
    const r = await tokenPost(s, grant(assertion(s.serviceAccount({ project: "proj-o" }))));
    expect(r.json).toEqual({ access_token: expect.stringMatching(/^ya29\.c\.[A-Za-z0-9_-]{64}$/), expires_in: 42, token_type: "Bearer" });
  });
});

describe("the Vertex routes check the token", () => {
  it("none, one it never issued, one for another project, one without the cloud-platform scope", async () => {
    const s = await standin();
    const key = s.serviceAccount({ project: "proj-c" });
    const path = claudePath("proj-c", "us-east5", CLAUDE);
    const missing = await vertexPost(s, path, null, claudeBody());
    expect([missing.status, missing.json.error.status, missing.json.error.details[0].reason]).toEqual([401, "UNAUTHENTICATED", "CREDENTIALS_MISSING"]);
    const forged = await vertexPost(s, path, "ya29.c.forged", claudeBody());
    expect([forged.status, forged.json.error.details[0].reason]).toEqual([401, "ACCESS_TOKEN_TYPE_UNSUPPORTED"]);
    const token = (await tokenPost(s, grant(assertion(key)))).json.access_token as string;
    const elsewhere = await vertexPost(s, claudePath("proj-x", "us-east5", CLAUDE), token, claudeBody());
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.error).toMatchObject({
      status: "PERMISSION_DENIED",
      message: `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/proj-x/locations/us-east5/publishers/anthropic/models/${CLAUDE}' (or it may not exist).`,
    });
    const narrow = (await tokenPost(s, grant(assertion(key, { scope: "https://www.googleapis.com/auth/devstorage.read_only" })))).json.access_token as string;
    const scoped = await vertexPost(s, path, narrow, claudeBody());
    expect([scoped.status, scoped.json.error.message, scoped.json.error.details[0].reason]).toEqual([403, "Request had insufficient authentication scopes.", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"]);
    expect((await vertexPost(s, path, token, claudeBody())).status).toBe(200);
    // The attempts count against the path's project whatever token came; the token is not logged as a credential.
    expect(s.stats().log.map((a) => [a.credential, a.outcome])).toEqual([
      ["proj-c", "unauthorized"], ["proj-c", "unauthorized"], ["proj-x", "unauthorized"], ["proj-c", "unauthorized"], ["proj-c", "success"],
    ]);
    expect(s.stats().oauth).toMatchObject({ unknown: 1 });
  });

  it("keys and expiry through the control routes, for a stand-in run from the command line", async () => {
    const s = await standin();
    const res = await fetch(`${s.url}/_vertex/service-accounts`, { method: "POST", body: JSON.stringify({ project: "proj-h" }) });
    const key = (await res.json()) as ServiceAccountFile;
    expect(key).toMatchObject({ type: "service_account", project_id: "proj-h", token_uri: `${s.url}/token`, client_email: expect.stringMatching(/@proj-h\.iam\.gserviceaccount\.com$/) });
    const token = await minter().token(readServiceAccountKey(key));
    expect((await vertexPost(s, geminiPath("proj-h", "us-central1", "gemini-2.5-pro"), token, geminiBody())).status).toBe(200);
    await fetch(`${s.url}/_vertex/expire`, { method: "POST" });
    const expired = await vertexPost(s, geminiPath("proj-h", "us-central1", "gemini-2.5-pro"), token, geminiBody());
    expect([expired.status, expired.json.error.details[0].reason]).toEqual([401, "ACCESS_TOKEN_EXPIRED"]);
  });
});
