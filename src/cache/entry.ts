/**
 * @module A stored answer's metadata and the pure decisions about it: which headers are kept, whether an
 * entry may answer a request now, whether a captured body is whole, and what the caller is told.
 */
import type { Spellings } from "../providers/flavour";
import { ACCOUNT_HEADERS, QUOTA_HEADERS, spelled, STREAM_ENDS, TIMING_HEADERS } from "../providers/headers";

export interface EntryMeta {
  /** Epoch ms. */
  storedAt: number;
  expiresAt: number;
  status: number;
  /** The provider's headers worth replaying (never rate-limit state, dates, cookies or whose account answered). */
  headers: [string, string][];
}

/** R2 custom metadata is bounded (2 KiB in all): past this the headers shrink to content-type. */
const HEADERS_JSON_MAX = 1_500;

/**
 * Headers that describe the provider's state at the time, not the answer: never replayed. The
 * providers' rate-limit families and timings are their rows' (providers/headers.ts).
 */
const TRANSIENT: Spellings = [...QUOTA_HEADERS, "x-slotgate-", "retry-after", "retry-after-", "date", "content-length", "age", "cache-status", ...TIMING_HEADERS];

/**
 * Headers that say whose account answered (a pool's member, an org or project) or carry a session:
 * a hit is replayed to whoever shares the entry, so they are never stored.
 */
const IDENTITY: Spellings = [...ACCOUNT_HEADERS, "set-cookie", "set-cookie2"];

/** Whether a header is replayed; metadata read back may name headers in any case. */
function keep(name: string): boolean {
  const n = name.toLowerCase();
  return !spelled(n, TRANSIENT) && !spelled(n, IDENTITY);
}

/** The headers an entry keeps (Headers iterates names lowercased). */
export function storableHeaders(h: Headers): [string, string][] {
  const kept: [string, string][] = [];
  for (const [name, value] of h) if (keep(name)) kept.push([name, value]);
  if (JSON.stringify(kept).length <= HEADERS_JSON_MAX) return kept;
  const type = h.get("content-type");
  return type ? [["content-type", type]] : [];
}

export function toCustomMetadata(m: EntryMeta): Record<string, string> {
  return { storedAt: String(m.storedAt), expiresAt: String(m.expiresAt), status: String(m.status), headers: JSON.stringify(m.headers) };
}

/** Metadata read back; null when it is not ours or is damaged (read as a miss). */
export function fromCustomMetadata(c: Record<string, string> | undefined): EntryMeta | null {
  if (!c) return null;
  const storedAt = Number(c.storedAt);
  const expiresAt = Number(c.expiresAt);
  const status = Number(c.status);
  if (![storedAt, expiresAt, status].every(Number.isFinite)) return null;
  try {
    const headers = JSON.parse(c.headers ?? "[]") as unknown;
    if (!Array.isArray(headers) || !headers.every((p) => Array.isArray(p) && p.length === 2 && p.every((s) => typeof s === "string"))) return null;
    // Filtered again: an entry stored before a header was left out must not replay it either.
    return { storedAt, expiresAt, status, headers: (headers as [string, string][]).filter(([name]) => keep(name)) };
  } catch {
    return null;
  }
}

/** Expiry is checked on every read; `max-age=N` narrows it to entries at most N seconds old. */
export function usable(m: EntryMeta, now: number, maxAgeS: number | null): boolean {
  if (now >= m.expiresAt) return false;
  return maxAgeS === null || now - m.storedAt <= maxAgeS * 1_000;
}

/** The `age` header: whole seconds since the entry was stored. */
export const ageSeconds = (m: EntryMeta, now: number) => Math.max(0, Math.floor((now - m.storedAt) / 1_000));

/**
 * Whether a captured body is a whole answer. A stream must end on an event boundary and carry its
 * API's final event (its family's row's `streamEnds`) (a stream cut short by the provider can still close cleanly); a JSON answer
 * must parse. Anything else (plain text, binary) is taken as whole once it has ended.
 */
export function complete(body: Uint8Array, contentType: string | null): boolean {
  const type = contentType?.toLowerCase() ?? "";
  if (type.includes("text/event-stream")) {
    const tail = new TextDecoder().decode(body.subarray(Math.max(0, body.byteLength - 4_096))).replace(/\r\n?/g, "\n");
    return tail.endsWith("\n\n") && STREAM_ENDS.some((m) => tail.includes(m));
  }
  if (type.includes("json")) {
    try {
      JSON.parse(new TextDecoder().decode(body));
      return true;
    } catch {
      return false;
    }
  }
  return true;
}

/** The request's outcome as `x-slotgate-cache` says it. */
export type CacheResult = "hit" | "miss" | "collapsed" | "bypass";

/**
 * RFC 9211 `cache-status`. `fwd` says why the request went on: `miss` (nothing usable), `request`
 * (no-cache asked for a refresh), `stale` (an entry older than max-age), `bypass` (not cached).
 */
export function cacheStatus(s: { hit: true } | { fwd: "miss" | "request" | "stale" | "bypass"; stored?: boolean; collapsed?: boolean }): string {
  if ("hit" in s) return "slotgate; hit";
  return `slotgate; fwd=${s.fwd}${s.stored ? "; stored" : ""}${s.collapsed ? "; collapsed" : ""}`;
}
