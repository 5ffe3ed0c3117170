// Virtual keys' secrets: minting, the tag that lets a Worker refuse a forged key on its own, and the
// HMAC under which the store keeps a key (never the key itself).
import { ConfigError } from "../config/env";
import { remember } from "../bounded";
import { base64url, type Presented, signedPart, TAG_BYTES } from "./format";

const enc = new TextEncoder();
/** Keys this isolate has checked, with their HMAC: a steady caller pays for neither HMAC again. */
const VERIFIED_KEPT = 1_024;

type Secrets = { VIRTUAL_KEY_SECRET?: string; ADMIN_TOKEN?: string };

/**
 * Per secret: its imported HMAC key, and the keys whose tags it has verified. Plain values, never
 * a promise another request would settle; a new secret starts afresh.
 */
const bySecret = new Map<string, { mac: CryptoKey; verified: Map<string, string> }>();

/**
 * VIRTUAL_KEY_SECRET, never ADMIN_TOKEN: a key's check characters are an HMAC its holder can test
 * guesses of the secret against offline, so the secret under them must open nothing else. A key
 * minted under ADMIN_TOKEN (before this rule) keeps working once VIRTUAL_KEY_SECRET is set to that
 * old value and ADMIN_TOKEN is changed. A leaked store cannot be checked against guesses without it.
 */
async function secretOf(env: Secrets): Promise<{ mac: CryptoKey; verified: Map<string, string> }> {
  const secret = env.VIRTUAL_KEY_SECRET;
  if (!secret) throw new ConfigError("virtual keys need the secret VIRTUAL_KEY_SECRET (its own, not ADMIN_TOKEN: see docs/pools-and-virtual-keys.md for keys minted before)");
  if (secret === env.ADMIN_TOKEN) throw new ConfigError("VIRTUAL_KEY_SECRET must differ from ADMIN_TOKEN: a virtual key's holder could test guesses of it offline");
  let s = bySecret.get(secret);
  if (!s) {
    if (bySecret.size > 4) bySecret.clear();
    const mac = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    s = { mac, verified: new Map() };
    bySecret.set(secret, s);
  }
  return s;
}

const sign = async (mac: CryptoKey, text: string) => new Uint8Array(await crypto.subtle.sign("HMAC", mac, enc.encode(text)));

/**
 * The tag: the first TAG_BYTES of the HMAC of everything before it. Only the gateway can make it.
 * It is over 48 characters, a stored hash over 47 (old keys) or 56: the two never share an input.
 */
const tagOf = async (mac: CryptoKey, signed: string) => base64url((await sign(mac, signed)).slice(0, TAG_BYTES));

/** A new key whose row goes to `shard`: 32 random bytes, the shard's digit, the tag. */
export async function mintKey(env: Secrets, shard: number): Promise<string> {
  const { mac } = await secretOf(env);
  const signed = signedPart(crypto.getRandomValues(new Uint8Array(32)), shard);
  return signed + (await tagOf(mac, signed));
}

/** HMAC-SHA-256 of the key, hex: what the store keeps and is asked for. */
export async function keyHash(env: Secrets, key: string): Promise<string> {
  const { mac } = await secretOf(env);
  return hex(await sign(mac, key));
}

/** The HMAC of a tagged key whose tag checks out (compared in constant time), else null: forged. */
export async function verifiedHash(env: Secrets, key: string, p: Extract<Presented, { format: "tagged" }>): Promise<string | null> {
  const { mac, verified } = await secretOf(env);
  const known = verified.get(key);
  if (known) return known;
  const want = enc.encode(await tagOf(mac, p.signed));
  if (!crypto.subtle.timingSafeEqual(want, enc.encode(p.tag))) return null;
  const hash = hex(await sign(mac, key));
  remember(verified, key, hash, VERIFIED_KEPT);
  return hash;
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
