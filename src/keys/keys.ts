// Virtual keys: `sgk-` and 43 characters of randomness, stored only as an HMAC under a secret.
import { ConfigError } from "../config/env";

const enc = new TextEncoder();

/** A new key: 32 random bytes, base64url. */
export function mintKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `sgk-${btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/** Imported once per secret; a plain value, never a promise another request would settle. */
const hmacKeys = new Map<string, CryptoKey>();

/**
 * HMAC-SHA-256 of the key under VIRTUAL_KEY_SECRET, else ADMIN_TOKEN (rotating that one then
 * invalidates every virtual key: set VIRTUAL_KEY_SECRET to keep them apart). A leaked store
 * cannot be checked against guesses without the secret.
 */
export async function keyHash(env: { VIRTUAL_KEY_SECRET?: string; ADMIN_TOKEN?: string }, key: string): Promise<string> {
  const secret = env.VIRTUAL_KEY_SECRET || env.ADMIN_TOKEN;
  if (!secret) throw new ConfigError("virtual keys need VIRTUAL_KEY_SECRET or ADMIN_TOKEN to be set");
  let k = hmacKeys.get(secret);
  if (!k) {
    if (hmacKeys.size > 4) hmacKeys.clear();
    k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    hmacKeys.set(secret, k);
  }
  const mac = await crypto.subtle.sign("HMAC", k, enc.encode(key));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
