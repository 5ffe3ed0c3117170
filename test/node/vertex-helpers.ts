// Shared by the Vertex stand-in's tests: a service account key's Google credentials as the SDKs
// use them (google-auth-library's JWT client), raw calls to the Vertex routes, bodies.
import { GoogleAuth } from "google-auth-library";
import type { AuthClient } from "google-auth-library";
import type { ServiceAccountFile, Standin } from "../support/standin/index.ts";

export const CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform";
/** Where google-auth-library posts every service account assertion (gtoken's GOOGLE_TOKEN_URL), whatever the key's token_uri says. */
export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

/**
 * Google credentials for `key` exactly as the SDKs build them (GoogleAuth -> JWT client -> a signed
 * assertion posted to the token endpoint), with one change: google-auth-library ignores a key's
 * token_uri and always posts to Google's, so its transporter's post goes to the key's token_uri
 * (the stand-in's) instead. The assertion is unchanged: its aud stays Google's URL, which the
 * stand-in's endpoint accepts as Google's does.
 */
export async function googleCredentials(key: ServiceAccountFile): Promise<{ auth: GoogleAuth; client: AuthClient; posts: string[] }> {
  const auth = new GoogleAuth({ credentials: key, scopes: [CLOUD_PLATFORM] });
  const client = await auth.getClient();
  const posts: string[] = [];
  client.transporter.interceptors.request.add({
    resolved: async (config) => {
      if (config.url.toString() === GOOGLE_TOKEN_URL) {
        config.url = new URL(key.token_uri);
        posts.push(config.url.toString());
      }
      return config;
    },
  });
  return { auth, client, posts };
}

export const claudePath = (project: string, location: string, model: string, verb = "rawPredict") =>
  `/v1/projects/${project}/locations/${location}/publishers/anthropic/models/${model}:${verb}`;
export const geminiPath = (project: string, location: string, model: string, verb = "generateContent") =>
  `/v1/projects/${project}/locations/${location}/publishers/google/models/${model}:${verb}`;

export const claudeBody = (extra: object = {}) => ({
  anthropic_version: "vertex-2023-10-16", max_tokens: 64, messages: [{ role: "user", content: "Say hello to the Vertex stand-in" }], ...extra,
});
export const geminiBody = (extra: object = {}) => ({ contents: [{ role: "user", parts: [{ text: "Say hello to the Vertex stand-in" }] }], ...extra });

/** A raw POST to the stand-in, with the token as Bearer when given. */
export async function vertexPost(s: Standin, path: string, token: string | null, body: unknown): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** A token for `key` straight from the stand-in's endpoint, through google-auth-library. */
export async function tokenFor(key: ServiceAccountFile): Promise<string> {
  const { client } = await googleCredentials(key);
  const t = await client.getAccessToken();
  return t.token!;
}

/** Headers that would tell a client a limit (none should come from Vertex). */
export const limitHeaders = (h: Headers) => [...h.keys()].filter((k) => /ratelimit|retry-after|x-ratelimit/i.test(k));
