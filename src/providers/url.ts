import type { Provider } from "./table";

const AZURE_RESOURCE = /^[a-z0-9][a-z0-9-]{0,62}$/i;

/**
 * The provider URL for `rest` (the path after `/<provider>`, still percent-encoded) and the query.
 * Returns null for a path that could leave the base URL: dot segments, encoded slashes or
 * backslashes, or an azure resource that is not a plain host label. The result always has the
 * configured origin, so no caller can choose a host.
 */
export function upstreamUrl(p: Provider, rest: string, search: string): URL | null {
  let base = p.baseUrl;
  let path = rest;
  if (base.includes("{resource}")) {
    const m = /^\/([^/]+)(\/.*)?$/.exec(rest);
    if (!m || !AZURE_RESOURCE.test(m[1]!)) return null;
    base = base.replace("{resource}", m[1]!.toLowerCase());
    path = m[2] ?? "/";
  }
  if (!path.startsWith("/")) path = `/${path}`;
  if (/%(2f|5c|2e)/i.test(path) || path.includes("\\")) return null;
  if (path.split("/").some((seg) => seg === "." || seg === "..")) return null;
  const baseUrl = new URL(base);
  const url = new URL(baseUrl.pathname.replace(/\/$/, "") + path + search, baseUrl.origin);
  return url.origin === baseUrl.origin ? url : null;
}

/** The model named by the path: Gemini `.../models/<model>:<verb>`, Azure `.../deployments/<name>/...`. */
export function modelFromPath(p: Provider, kind: "gemini-path" | "azure-path", rest: string): string | null {
  const re = kind === "gemini-path" ? /\/models\/([^/:]+)/ : /\/deployments\/([^/]+)/;
  const m = re.exec(rest);
  return m ? decodeURIComponent(m[1]!) : null;
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
