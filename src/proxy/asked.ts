// What a request asks, read from its line and headers before its body: the provider and upstream
// URL, the limit-key label, and the limits it may lower. Anything malformed is refused here, before
// a body is read or an object called.
import { LABEL } from "../providers/key";
import type { Provider } from "../providers/table";
import { splitPath, upstreamUrl } from "../providers/url";
import { gatewayError } from "./errors";
import type { Settings } from "./settings";

export interface Asked {
  method: string;
  headers: Headers;
  incoming: URL;
  provider: Provider;
  /** The path after `/<provider>`, as sent. */
  rest: string;
  /** Where it goes: always on the provider's configured origin. */
  url: URL;
  /** `x-slotgate-limit-key`, if sent. */
  label: string | null;
  maxAttempts: number;
  /** Epoch ms: queueing and retries end by then. */
  deadline: number;
  hasBody: boolean;
}

/** A caller may lower, never raise, a limit with a header; garbage is refused, not guessed at. */
function lowered(raw: string | null, configured: number, name: string): number | string {
  if (raw === null) return configured;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < 1) return `${name} must be a positive integer`;
  return Math.min(n, configured);
}

/** Whether every `%` escape in a path is whole (`%ZZ` is not): the model and ids are read from it decoded. */
function decodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The request as asked, or the error that refuses it (404 `unknown_provider`, 400 `invalid_request`). */
export function askedOf(req: Request, incoming: URL, s: Settings, now: number): Asked | Response {
  const { name, rest } = splitPath(incoming.pathname);
  const provider = Object.hasOwn(s.table, name) ? s.table[name] : undefined;
  if (!provider) return gatewayError("unknown_provider", `no provider named ${JSON.stringify(name.slice(0, 64))}`);
  if (!decodable(rest)) return gatewayError("invalid_request", "the path has a malformed percent-escape");
  const url = upstreamUrl(provider, rest, incoming.search);
  if (!url) return gatewayError("invalid_request", "the path may not leave the provider's base URL");
  const headers = req.headers;
  const label = headers.get("x-slotgate-limit-key");
  if (label !== null && !LABEL.test(label)) return gatewayError("invalid_request", "x-slotgate-limit-key must be 1-128 of A-Z a-z 0-9 . _ @ + / -");
  const maxAttempts = lowered(headers.get("x-slotgate-max-attempts"), s.gw.maxAttempts, "x-slotgate-max-attempts");
  const deadlineMs = lowered(headers.get("x-slotgate-deadline-ms"), s.gw.deadlineMs, "x-slotgate-deadline-ms");
  if (typeof maxAttempts === "string") return gatewayError("invalid_request", maxAttempts);
  if (typeof deadlineMs === "string") return gatewayError("invalid_request", deadlineMs);
  const method = req.method;
  return { method, headers, incoming, provider, rest, url, label, maxAttempts, deadline: now + deadlineMs, hasBody: method !== "GET" && method !== "HEAD" };
}
