/**
 * The cache key: provider, method, upstream path and query, tenant, namespace, sample and the body
 * as canonical JSON. Two requests that differ in any of them never share an entry; two that differ
 * only in key order or whitespace do.
 */
export interface KeyInput {
  provider: string;
  method: string;
  /** The path after the provider segment, with the query string. */
  path: string;
  /** Whose entries these are: the credential's hash today, a pool's name once pools exist. */
  tenant: string;
  namespace: string;
  sample: number;
  /** The body as read, and as parsed when it is JSON (undefined or null: not JSON). */
  body: Uint8Array;
  json: unknown;
}

/** JSON with every object's keys sorted, recursively; arrays keep their order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x ?? null)).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

/** What the key hashes: a one-line JSON header, a newline, then the canonical body (or the raw bytes). */
export function keyMaterial(k: KeyInput): Uint8Array {
  const head = new TextEncoder().encode(`${JSON.stringify(["v1", k.provider, k.method, k.path, k.tenant, k.namespace, k.sample])}\n`);
  const isJson = k.json !== null && k.json !== undefined;
  const body = isJson ? new TextEncoder().encode(`j${canonicalJson(k.json)}`) : concat2(new TextEncoder().encode("b"), k.body);
  return concat2(head, body);
}

function concat2(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

/** SHA-256 of the key material, as 64 hex digits. */
export async function cacheKey(k: KeyInput): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", keyMaterial(k));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Index and in-flight shards: identical requests always meet in the same one. */
export const SHARDS = 16;

export function shardOf(key: string): number {
  return Number.parseInt(key.slice(0, 4), 16) % SHARDS;
}
