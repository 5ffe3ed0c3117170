// A virtual key's shape, read with no secret and no store: `sgk-`, 43 random characters, one hex
// digit naming the store shard its row is in, and an 8-character tag (keys.ts). Keys minted before
// the tag existed are `sgk-` and the 43 characters alone; anything else is no key at all.

/** How many instances of the store hold the keys minted with a tag. */
export const SHARDS = 16;
const DIGITS = "0123456789abcdef";
/** The tag is this many bytes of HMAC: 8 base64url characters, 48 bits a forger has to guess. */
export const TAG_BYTES = 6;

const TAGGED = /^(sgk-[A-Za-z0-9_-]{43}([0-9a-f]))([A-Za-z0-9_-]{8})$/;
const LEGACY = /^sgk-[A-Za-z0-9_-]{43}$/;

export type Presented =
  /** `signed` is what the tag is an HMAC of: everything before it. */
  | { format: "tagged"; signed: string; shard: number; tag: string }
  /** Minted before tags and shards: its row is in the old single instance. */
  | { format: "legacy" }
  | { format: "malformed" };

/** What a presented `sgk-` string claims to be: pure, so a forgery costs no more than a regex. */
export function readKey(key: string): Presented {
  const m = TAGGED.exec(key);
  if (m) return { format: "tagged", signed: m[1]!, shard: DIGITS.indexOf(m[2]!), tag: m[3]! };
  return LEGACY.test(key) ? { format: "legacy" } : { format: "malformed" };
}

/** The part of a new key that the tag covers: the random characters, then the shard's digit. */
export function signedPart(random: Uint8Array, shard: number): string {
  return `sgk-${base64url(random)}${DIGITS[shard]}`;
}

/**
 * The shard a key's name is stored in (FNV-1a of the name, 16 ways): a name has one place, so its
 * uniqueness is checked there, and the digit in its key sends every lookup straight to it.
 */
export function shardOfName(name: string): number {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(name)) h = Math.imul(h ^ byte, 0x01000193);
  return (h >>> 0) % SHARDS;
}

export function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
