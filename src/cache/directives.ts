import { type CacheConfig, MAX_TTL_S, OPT_IN_MAX_TTL_S } from "./config";

/**
 * What one request asks of the cache, from `x-slotgate-cache*`, the RFC 9111 request directives
 * in `cache-control`, and Cloudflare AI Gateway's `cf-aig-*` aliases. Pure: headers in, a plan
 * (or the reason it is refused) out.
 */
export type CachePlan = Bypass | Use;

export interface Bypass {
  use: false;
  /** `off`: the request turned it off; `unasked`: CACHE is off and the request did not ask; `endpoint`: not inference. */
  why: "off" | "unasked" | "endpoint";
  namespace: string;
}

export interface Use {
  use: true;
  /** Look for a stored answer (false under `cache-control: no-cache`: a refresh). */
  read: boolean;
  /** Store the answer (false under `no-store`, and always for `only`). */
  write: boolean;
  /** Replay only (`x-slotgate-cache: only`, `only-if-cached`): a miss is 504 and nothing goes upstream. */
  only: boolean;
  /** `max-age=N`: only entries younger than N seconds will do. */
  maxAgeS: number | null;
  ttlS: number;
  namespace: string;
  sample: number;
}

export const DEFAULT_NAMESPACE = "default";
export const NAMESPACE = /^[A-Za-z0-9._@+\/:-]{1,128}$/;
export const NAMESPACE_RULE = "must be 1-128 of A-Z a-z 0-9 . _ @ + / : -";
const SECONDS = /^\d{1,10}$/;

type Get = (name: string) => string | null | undefined;

/** `cache-control` request directives, lowercased, with their arguments (quotes removed). */
export function parseCacheControl(raw: string | null | undefined): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const part of (raw ?? "").split(",")) {
    const m = /^\s*([A-Za-z0-9_-]+)\s*(?:=\s*(?:"([^"]*)"|([^\s,]*)))?\s*$/.exec(part);
    if (m) out.set(m[1]!.toLowerCase(), m[2] ?? m[3] ?? null);
  }
  return out;
}

/** Whole seconds, or a message naming the header. */
function seconds(raw: string, name: string): number | string {
  const v = raw.trim();
  if (!SECONDS.test(v)) return `${name} must be whole seconds`;
  return Number(v);
}

/**
 * `inference`: whether the request is a generation, an embedding or a token count
 * (`isInference`). Nothing else is cached: a repeated `POST /v1/batches` must make a new batch,
 * not replay the first one's id.
 */
export function cachePlan(get: Get, inference: boolean, cfg: CacheConfig): CachePlan | string {
  const modeRaw = get("x-slotgate-cache");
  const mode = modeRaw == null ? null : modeRaw.trim().toLowerCase();
  if (mode !== null && mode !== "on" && mode !== "off" && mode !== "only") return "x-slotgate-cache must be on, off or only";
  const skipRaw = get("cf-aig-skip-cache");
  const skip = skipRaw == null ? false : skipRaw.trim().toLowerCase();
  if (skip !== false && skip !== "true" && skip !== "false") return "cf-aig-skip-cache must be true or false";

  const namespace = get("x-slotgate-cache-namespace") ?? DEFAULT_NAMESPACE;
  if (!NAMESPACE.test(namespace)) return `x-slotgate-cache-namespace ${NAMESPACE_RULE}`;
  const sampleRaw = get("x-slotgate-cache-sample");
  let sample = 0;
  if (sampleRaw != null) {
    if (!/^\d{1,9}$/.test(sampleRaw.trim())) return "x-slotgate-cache-sample must be a whole number";
    sample = Number(sampleRaw.trim());
  }
  const ttlHeader = get("x-slotgate-cache-ttl") != null ? "x-slotgate-cache-ttl" : get("cf-aig-cache-ttl") != null ? "cf-aig-cache-ttl" : null;
  let ttlS = cfg.ttlS;
  if (ttlHeader) {
    const t = seconds(get(ttlHeader)!, ttlHeader);
    if (typeof t === "string") return t;
    if (t < 1) return `${ttlHeader} must be at least 1`;
    ttlS = Math.min(t, MAX_TTL_S);
  }
  const cc = parseCacheControl(get("cache-control"));
  let maxAgeS: number | null = null;
  if (cc.has("max-age")) {
    const a = seconds(cc.get("max-age") ?? "", "cache-control max-age");
    if (typeof a === "string") return a;
    maxAgeS = a;
  }

  if (mode === "off" || (mode === null && skip === "true")) return { use: false, why: "off", namespace };
  const only = mode === "only" || (mode === null && cc.has("only-if-cached"));
  if (!only && mode !== "on" && !cfg.on) return { use: false, why: "unasked", namespace };
  if (!inference) {
    if (only) return "only inference requests (generations, embeddings, token counts) are cached";
    return { use: false, why: "endpoint", namespace };
  }
  const read = !cc.has("no-cache");
  if (only && !read) return "replay only and no-cache contradict each other";
  if (!cfg.on) ttlS = Math.min(ttlS, OPT_IN_MAX_TTL_S);
  return { use: true, read, write: !only && !cc.has("no-store"), only, maxAgeS, ttlS, namespace, sample };
}
