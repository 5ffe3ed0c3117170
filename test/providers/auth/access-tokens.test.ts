// Service account tokens minted in workerd with WebCrypto: the key file read field by field, the
// JWT assertion Google's server-to-server flow asks for (checked against the public half of a key
// pair made here), the token endpoint's answers and refusals, and the per-isolate cache (expiry by
// an injected clock, single flight, a token Vertex refused, its bound). The token endpoint is a
// fake here; test/node/standin.vertex.test.ts runs the same minter against the stand-in's.
import { beforeAll, describe, expect, it } from "vitest";
import { CLOUD_PLATFORM, GoogleAuthError, GOOGLE_TOKEN_URI, readServiceAccountKey, type ServiceAccountKey } from "../../../src/providers/auth/service-account";
import { FOLLOW_MS, GoogleTokens, JWT_BEARER, REFRESH_MARGIN_MS } from "../../../src/providers/auth/access-tokens";

const ALG = { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" };
const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
const HOUR = 3_600_000;

async function keyPair(): Promise<{ pem: string; publicKey: CryptoKey }> {
  const pair = (await crypto.subtle.generateKey(ALG, true, ["sign", "verify"])) as CryptoKeyPair;
  const der = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const b64 = btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n");
  return { pem: `-----BEGIN PRIVATE KEY-----\n${b64}\n-----END PRIVATE KEY-----\n`, publicKey: pair.publicKey };
}

const fromB64url = (s: string) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
const part = (s: string) => JSON.parse(new TextDecoder().decode(fromB64url(s))) as Record<string, unknown>;

interface Posted {
  url: string;
  grant: string | null;
  assertion: string;
}

/** A token endpoint: records each post and answers with `answer(n)` (n from 1), by default a token `tok-n` for an hour. */
function endpoint(answer: (n: number, p: Posted) => Response | Promise<Response> = (n) => Response.json({ access_token: `tok-${n}`, expires_in: 3599, token_type: "Bearer" })) {
  const posts: Posted[] = [];
  const fetch = async (url: string, init: RequestInit) => {
    const form = new URLSearchParams(init.body as string);
    const p = { url, grant: form.get("grant_type"), assertion: form.get("assertion") ?? "" };
    posts.push(p);
    return answer(posts.length, p);
  };
  return { posts, fetch };
}

function clock(start = T0) {
  let t = start;
  return { now: () => t, set: (ms: number) => (t = ms), add: (ms: number) => (t += ms) };
}

let pem: string;
let publicKey: CryptoKey;
let otherPublic: CryptoKey;
let key: ServiceAccountKey;
const file = () => ({
  type: "service_account", project_id: "proj-a", private_key_id: "0123456789abcdef0123456789abcdef01234567", private_key: pem,
  client_email: "evals@proj-a.iam.gserviceaccount.com", client_id: "100000000000000000001", token_uri: "https://oauth2.example.test/token",
});

beforeAll(async () => {
  ({ pem, publicKey } = await keyPair());
  ({ publicKey: otherPublic } = await keyPair());
  key = readServiceAccountKey(JSON.stringify(file()));
});

describe("the key file", () => {
  it("reads the four fields the flow needs, from the text or the object; token_uri defaults to Google's", () => {
    expect(key).toEqual({ clientEmail: "evals@proj-a.iam.gserviceaccount.com", privateKey: pem, privateKeyId: file().private_key_id, tokenUri: "https://oauth2.example.test/token" });
    const { token_uri: _, ...noUri } = file();
    expect(readServiceAccountKey(noUri).tokenUri).toBe(GOOGLE_TOKEN_URI);
  });

  it("refuses a malformed key with a message naming the field, never the key", () => {
    const bad: [unknown, RegExp][] = [
      ["{not json", /not valid JSON/],
      [[], /JSON object/],
      [{ ...file(), type: "authorized_user" }, /"type" is not "service_account"/],
      [{ ...file(), client_email: "nobody" }, /"client_email"/],
      [{ ...file(), private_key_id: "" }, /"private_key_id" is missing/],
      [{ ...file(), private_key: undefined }, /"private_key" is missing/],
      [{ ...file(), private_key: pem.replace(/PRIVATE KEY/g, "RSA PRIVATE KEY") }, /PKCS#1/],
      [{ ...file(), private_key: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" }, /not a PKCS#8 PEM/],
      [{ ...file(), token_uri: "file:///etc/passwd" }, /"token_uri" is not an http\(s\) URL/],
    ];
    const body = pem.split("\n")[1]!;
    for (const [input, message] of bad) {
      const e = (() => {
        try {
          readServiceAccountKey(input);
        } catch (err) {
          return err as GoogleAuthError;
        }
        throw new Error(`accepted ${JSON.stringify(input).slice(0, 60)}`);
      })();
      expect(e).toBeInstanceOf(GoogleAuthError);
      expect(e.failure).toBe("malformed_key");
      expect(e.message).toMatch(message);
      expect(e.message).not.toContain(body);
    }
  });

  it("a key whose PEM does not decode to an RSA key fails at the first token, clearly and without it", async () => {
    const garbage = "-----BEGIN PRIVATE KEY-----\nTk9UQUtFWU5PVEFLRVlOT1RBS0VZ\n-----END PRIVATE KEY-----\n";
    const { fetch, posts } = endpoint();
    const tokens = new GoogleTokens({ fetch, now: () => T0 });
    const e = await tokens.token(readServiceAccountKey({ ...file(), private_key: garbage })).catch((err: unknown) => err as GoogleAuthError);
    expect(e).toBeInstanceOf(GoogleAuthError);
    expect((e as GoogleAuthError).failure).toBe("malformed_key");
    expect((e as GoogleAuthError).message).toBe('service account key: "private_key" could not be read as an RSA key (key of evals@proj-a.iam.gserviceaccount.com)');
    expect(posts).toHaveLength(0);
  });

  it("reads a key whose newlines were pasted as \\n", async () => {
    const { fetch, posts } = endpoint();
    const escaped = readServiceAccountKey({ ...file(), private_key: pem.replace(/\n/g, "\\n") });
    await new GoogleTokens({ fetch, now: () => T0 }).token(escaped);
    expect(posts).toHaveLength(1);
  });
});

describe("the assertion", () => {
  it("is an RS256 JWT with kid, iss, scope, aud = token_uri, iat, exp = iat + 1 h, posted as a jwt-bearer grant and signed by the key", async () => {
    const { fetch, posts } = endpoint();
    await new GoogleTokens({ fetch, now: () => T0 + 999 }).token(key);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.url).toBe("https://oauth2.example.test/token");
    expect(posts[0]!.grant).toBe(JWT_BEARER);
    const [h, c, s] = posts[0]!.assertion.split(".") as [string, string, string];
    expect(part(h)).toEqual({ alg: "RS256", typ: "JWT", kid: file().private_key_id });
    const iat = Math.floor(T0 / 1000);
    expect(part(c)).toEqual({ iss: "evals@proj-a.iam.gserviceaccount.com", scope: CLOUD_PLATFORM, aud: "https://oauth2.example.test/token", iat, exp: iat + 3600 });
    const signed = new TextEncoder().encode(`${h}.${c}`);
    expect(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", publicKey, fromB64url(s), signed)).toBe(true);
    expect(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", otherPublic, fromB64url(s), signed)).toBe(false);
    const tampered = new TextEncoder().encode(`${h}.${c.slice(0, -2)}xx`);
    expect(await crypto.subtle.verify("RSASSA-PKCS1-v1_5", publicKey, fromB64url(s), tampered)).toBe(false);
  });

  it("carries the scope asked for", async () => {
    const { fetch, posts } = endpoint();
    await new GoogleTokens({ fetch, now: () => T0 }).token(key, { scope: "https://www.googleapis.com/auth/cloud-platform.read-only" });
    expect(part(posts[0]!.assertion.split(".")[1]!).scope).toBe("https://www.googleapis.com/auth/cloud-platform.read-only");
  });
});

describe("the cache", () => {
  it("keeps a token until five minutes before it expires, then mints the next", async () => {
    const c = clock();
    const { fetch, posts } = endpoint((n) => Response.json({ access_token: `tok-${n}`, expires_in: 3600, token_type: "Bearer" }));
    const tokens = new GoogleTokens({ fetch, now: c.now });
    expect(await tokens.token(key)).toBe("tok-1");
    c.set(T0 + HOUR - REFRESH_MARGIN_MS - 1);
    expect(await tokens.token(key)).toBe("tok-1");
    c.set(T0 + HOUR - REFRESH_MARGIN_MS);
    expect(await tokens.token(key)).toBe("tok-2");
    expect(await tokens.token(key)).toBe("tok-2");
    expect(posts).toHaveLength(2);
  });

  it("keeps a short-lived token for half its life", async () => {
    const c = clock();
    const { fetch, posts } = endpoint((n) => Response.json({ access_token: `tok-${n}`, expires_in: 4 }));
    const tokens = new GoogleTokens({ fetch, now: c.now });
    expect(await tokens.token(key)).toBe("tok-1");
    c.add(1999);
    expect(await tokens.token(key)).toBe("tok-1");
    c.add(1);
    expect(await tokens.token(key)).toBe("tok-2");
    expect(posts).toHaveLength(2);
  });

  it("uses a token that came without a lifetime for one request only", async () => {
    const { fetch, posts } = endpoint((n) => Response.json({ access_token: `tok-${n}` }));
    const tokens = new GoogleTokens({ fetch, now: () => T0 });
    expect([await tokens.token(key), await tokens.token(key)]).toEqual(["tok-1", "tok-2"]);
    expect(posts).toHaveLength(2);
  });

  it("keys by identity: another key id, token endpoint or scope is another token", async () => {
    const { fetch, posts } = endpoint();
    const tokens = new GoogleTokens({ fetch, now: () => T0 });
    const a = await tokens.token(key);
    const b = await tokens.token({ ...key, privateKeyId: "fedcba" });
    const c = await tokens.token({ ...key, tokenUri: "https://other.example.test/token" });
    const d = await tokens.token(key, { scope: "x" });
    expect(new Set([a, b, c, d]).size).toBe(4);
    expect(await tokens.token(key)).toBe(a);
    expect(posts).toHaveLength(4);
  });

  it("mints once for every request that asks while a mint is out (single flight), and lends the mint to waitUntil", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { fetch, posts } = endpoint(async (n) => {
      await gate;
      return Response.json({ access_token: `tok-${n}`, expires_in: 3599 });
    });
    const tokens = new GoogleTokens({ fetch, now: () => T0 });
    const lent: Promise<unknown>[] = [];
    const asks = Array.from({ length: 12 }, () => tokens.token(key, { waitUntil: (p) => lent.push(p) }));
    await new Promise((r) => setTimeout(r, 20));
    expect(posts).toHaveLength(1);
    open();
    expect(new Set(await Promise.all(asks))).toEqual(new Set(["tok-1"]));
    expect(posts).toHaveLength(1);
    expect(lent).toHaveLength(1); // only the request that minted lends it
  });

  it("a waiter whose leader never finishes (its request gone) mints itself after FOLLOW_MS", async () => {
    const { fetch, posts } = endpoint((n) => (n === 1 ? new Promise<Response>(() => {}) : Response.json({ access_token: `tok-${n}`, expires_in: 3599 })));
    const waited: number[] = [];
    const tokens = new GoogleTokens({ fetch, now: () => T0, sleep: async (ms) => void waited.push(ms) });
    void tokens.token(key); // the leader: hangs forever
    await new Promise((r) => setTimeout(r, 20));
    expect(await tokens.token(key)).toBe("tok-2");
    expect(waited).toEqual([FOLLOW_MS]);
    expect(await tokens.token(key)).toBe("tok-2");
    expect(posts).toHaveLength(2);
  });

  it("a token Vertex refused is dropped: the next request mints; a late 401 for an older token leaves the newer one", async () => {
    const { fetch, posts } = endpoint();
    const tokens = new GoogleTokens({ fetch, now: () => T0 });
    const first = await tokens.token(key);
    tokens.refuse(key, first);
    const second = await tokens.token(key);
    expect(second).not.toBe(first);
    tokens.refuse(key, first);
    expect(await tokens.token(key)).toBe(second);
    expect(posts).toHaveLength(2);
  });

  it("holds at most maxEntries identities, the least recently used going first", async () => {
    const { fetch, posts } = endpoint();
    const tokens = new GoogleTokens({ fetch, now: () => T0, maxEntries: 2 });
    const k = (id: string) => ({ ...key, privateKeyId: id });
    await tokens.token(k("a"));
    await tokens.token(k("b"));
    await tokens.token(k("a")); // a is now the most recent
    await tokens.token(k("c")); // b goes
    expect(tokens.size).toBe(2);
    expect(posts).toHaveLength(3);
    await tokens.token(k("a"));
    expect(posts).toHaveLength(3);
    await tokens.token(k("b"));
    expect(posts).toHaveLength(4);
  });
});

describe("the token endpoint's refusals", () => {
  const failing = async (answer: Parameters<typeof endpoint>[0] | "throw") => {
    const fetch = answer === "throw" ? async () => Promise.reject(new TypeError("internal error; reference = 7d3e")) : endpoint(answer).fetch;
    return new GoogleTokens({ fetch, now: () => T0 }).token(key).then(
      () => {
        throw new Error("minted");
      },
      (e: unknown) => e as GoogleAuthError,
    );
  };

  it("invalid_grant: a clear message with the endpoint, the account and Google's words, no key and no assertion", async () => {
    let assertion = "";
    const e = await failing((_n, p) => {
      assertion = p.assertion;
      return Response.json({ error: "invalid_grant", error_description: "Invalid JWT Signature." }, { status: 400 });
    });
    expect(e).toBeInstanceOf(GoogleAuthError);
    expect({ failure: e.failure, status: e.status, code: e.code }).toEqual({ failure: "refused", status: 400, code: "invalid_grant" });
    expect(e.message).toBe("token endpoint oauth2.example.test refused service account evals@proj-a.iam.gserviceaccount.com (400): invalid_grant: Invalid JWT Signature.");
    expect(e.message).not.toContain(pem.split("\n")[1]!);
    expect(e.message).not.toContain(assertion);
  });

  it("an endpoint that quotes the assertion back does not get it into the message", async () => {
    let assertion = "";
    const e = await failing((_n, p) => {
      assertion = p.assertion;
      return Response.json({ error: "invalid_request", error_description: `bad assertion ${p.assertion}` }, { status: 400 });
    });
    expect(e.message).not.toContain(assertion.split(".")[2]!.slice(0, 40));
    expect(e.message).toContain("[assertion]");
  });

  it("unreachable, a non-JSON error page, an answer without a token, a token that is not Bearer", async () => {
    const down = await failing("throw");
    expect([down.failure, down.message]).toEqual(["unreachable", "token endpoint oauth2.example.test could not be reached for service account evals@proj-a.iam.gserviceaccount.com"]);
    const html = await failing(() => new Response("<html>502</html>", { status: 502 }));
    expect([html.failure, html.status, html.message]).toEqual(["refused", 502, "token endpoint oauth2.example.test refused service account evals@proj-a.iam.gserviceaccount.com (502): no OAuth error in the answer"]);
    const empty = await failing(() => Response.json({ expires_in: 3599 }));
    expect(empty.failure).toBe("bad_answer");
    const mac = await failing(() => Response.json({ access_token: "x", token_type: "mac" }));
    expect(mac.failure).toBe("bad_answer");
  });

  it("a failed mint is not kept: the next request tries again", async () => {
    const { fetch, posts } = endpoint((n) => (n === 1 ? Response.json({ error: "temporarily_unavailable" }, { status: 503 }) : Response.json({ access_token: "tok-ok", expires_in: 3599 })));
    const tokens = new GoogleTokens({ fetch, now: () => T0 });
    await expect(tokens.token(key)).rejects.toThrow(/\(503\): temporarily_unavailable/);
    expect(await tokens.token(key)).toBe("tok-ok");
    expect(posts).toHaveLength(2);
  });
});
