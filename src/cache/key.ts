/**
 * @module The cache key: provider, method, upstream path and query, tenant, namespace, sample, the request
 * headers that change the answer, and the body as canonical JSON. Two requests that differ in any
 * of them never share an entry; two that differ only in key order or whitespace do.
 */
import { SEMANTIC_HEADERS } from "../providers/headers";

export interface KeyInput {
  provider: string;
  method: string;
  /** The path after the provider segment, with the query string. */
  path: string;
  /** Whose entries these are: the credential's hash, or a virtual key's (or its pool's, where it shares). */
  tenant: string;
  namespace: string;
  sample: number;
  /** The semantic headers the request sent (`semanticHeaders`), normalised; empty when it sent none. */
  headers: readonly (readonly [string, string])[];
  /** The body as read, and as parsed when it is JSON (undefined or null: not JSON). */
  body: Uint8Array;
  json: unknown;
}

/**
 * The semantic headers a request sent (those that change the answer: the API version, the beta
 * features asked for, a field mask; each family's row names its own), in a fixed order, each value
 * read as a comma list of features: trimmed, deduplicated and sorted (`a,b` and `b, a` ask for
 * the same). Absent or empty ones are left out, so a request that sends none keys exactly as
 * before these were keyed.
 */
export function semanticHeaders(get: (name: string) => string | null): [string, string][] {
  const out: [string, string][] = [];
  // Credentials and org/project headers need no place here: they are in the tenant (the credential
  // hash). A version in the path or the query is keyed already.
  for (const name of SEMANTIC_HEADERS) {
    const items = [...new Set((get(name) ?? "").split(",").map((s) => s.trim()).filter(Boolean))].sort();
    if (items.length) out.push([name, items.join(",")]);
  }
  return out;
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

/**
 * What the key hashes: a one-line JSON header, a newline, then the canonical body (or the raw
 * bytes). The semantic headers join the header line only when there are any: keys stored before
 * they were keyed stay valid for requests without them.
 */
export function keyMaterial(k: KeyInput): Uint8Array {
  const parts = ["v1", k.provider, k.method, k.path, k.tenant, k.namespace, k.sample, ...(k.headers.length ? [k.headers] : [])];
  const head = new TextEncoder().encode(`${JSON.stringify(parts)}\n`);
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
