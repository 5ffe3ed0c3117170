import type { HostPart } from "./flavour";
import { FLAVOURS, type Provider } from "./table";

/** Where a `{resource}` base URL's part is when the flavour's row says nothing: the path's first segment (a host label), taken off. */
const FIRST_SEGMENT: HostPart = { from: /^\/([^/]+)/, strip: true, check: /^[a-z0-9][a-z0-9-]{0,62}$/i };

/** The part of a caller's path that names the varying part of `p`'s host, if its base URL has one. */
export const hostPartOf = (p: Provider): HostPart | null => (p.baseUrl.includes("{resource}") ? (FLAVOURS[p.flavour].host ?? FIRST_SEGMENT) : null);

/** A base URL with its `{resource}` given (or the whole URL the row gives for that value: Vertex's `global`). */
export function baseFor(baseUrl: string, part: HostPart | null | undefined, value: string): string {
  return part?.hosts?.[value] ?? baseUrl.replace("{resource}", value);
}

/**
 * The value of `rest`'s host part (lowercased) and the path that goes upstream, or null when the
 * path names none, or one that is not a plain host label.
 */
export function hostValue(part: HostPart, rest: string): { value: string; path: string } | null {
  const m = part.from.exec(rest);
  if (!m || !part.check.test(m[1]!)) return null;
  const path = part.strip ? rest.slice(0, m.index) + rest.slice(m.index + m[0].length) : rest;
  return { value: m[1]!.toLowerCase(), path: path || "/" };
}

/**
 * The provider URL for `rest` (the path after `/<provider>`, still percent-encoded) and the query.
 * Returns null for a path that could leave the base URL: dot segments, encoded slashes or
 * backslashes, or a host part (an Azure resource, a region, a location) that is not a plain host
 * label. The result always has the configured origin, so no caller can choose a host.
 */
export function upstreamUrl(p: Provider, rest: string, search: string): URL | null {
  let base = p.baseUrl;
  let path = rest;
  const part = hostPartOf(p);
  if (part) {
    const got = hostValue(part, rest);
    if (!got) return null;
    base = baseFor(base, part, got.value);
    path = got.path;
  }
  if (!path.startsWith("/")) path = `/${path}`;
  if (/%(2f|5c|2e)/i.test(path) || path.includes("\\")) return null;
  if (path.split("/").some((seg) => seg === "." || seg === "..")) return null;
  const baseUrl = new URL(base);
  const url = new URL(baseUrl.pathname.replace(/\/$/, "") + path + search, baseUrl.origin);
  return url.origin === baseUrl.origin ? url : null;
}

/** Where each path kind names its model: `.../models/<model>:<verb>`, `.../deployments/<name>/...`, `/model/<id>/<op>`. */
const MODEL_IN_PATH = { "gemini-path": /\/models\/([^/:]+)/, "azure-path": /\/deployments\/([^/]+)/, "bedrock-path": /\/model\/([^/]+)\// } as const;

/** The model named by the path, decoded (null: none, or a malformed escape). */
export function modelFromPath(kind: keyof typeof MODEL_IN_PATH, rest: string): string | null {
  const m = MODEL_IN_PATH[kind].exec(rest);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return null;
  }
}

/**
 * The provider's name and the rest of the path, from the raw (still percent-encoded) path: the
 * name is decoded, the rest is not, so `/%6fpenai/v1/x` is openai's `/v1/x`, never `ai/v1/x`.
 */
export function splitPath(pathname: string): { name: string; rest: string } {
  const at = pathname.indexOf("/", 1);
  const seg = at < 0 ? pathname.slice(1) : pathname.slice(1, at);
  let name = seg;
  try {
    name = decodeURIComponent(seg);
  } catch {
    // A malformed escape names no provider: it is looked up as it is and gets a 404.
  }
  return { name, rest: at < 0 ? "" : pathname.slice(at) };
}
