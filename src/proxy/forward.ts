import { hopByHop } from "./hop";

/** Hop-by-hop headers (RFC 9110 §7.6.1; hop.ts has the full rule) and ones the runtime sets itself. */
const HOP = new Set([
  "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
  "proxy-authorization", "proxy-authenticate", "host", "content-length", "expect",
]);

function dropped(name: string): boolean {
  return HOP.has(name) || name.startsWith("cf-") || name.startsWith("x-slotgate-") ||
    name === "x-forwarded-for" || name === "x-real-ip" || name === "cookie";
}

/**
 * What goes upstream: the caller's headers minus hop-by-hop, `host`, `cookie`, `cf-*` and
 * `x-slotgate-*`. Copied by the runtime, the few dropped taken out after (cheaper than a copy
 * made header by header in JavaScript).
 */
export function upstreamHeaders(incoming: Headers): Headers {
  const out = new Headers(incoming);
  const hop = hopByHop(incoming);
  for (const name of incoming.keys()) if (dropped(name) || hop(name)) out.delete(name);
  return out;
}

/**
 * What goes back: the provider's headers minus hop-by-hop ones, each under the name `rename`
 * gives it. The runtime has already decoded the body, so its encoding and length no longer
 * describe it. Copied by the runtime, then the few dropped or renamed changed.
 */
export function callerHeaders(upstream: Headers, rename: (name: string) => string = (n) => n): Headers {
  const out = new Headers(upstream);
  const hop = hopByHop(upstream);
  for (const name of upstream.keys()) {
    // `x-slotgate-*` is the gateway's own: a provider cannot set `x-slotgate-error` for it.
    if (HOP.has(name) || hop(name) || name === "content-encoding" || name.startsWith("cf-") || name.startsWith("x-slotgate-")) {
      out.delete(name);
      continue;
    }
    const to = rename(name);
    if (to === name) continue;
    out.delete(name);
    for (const [k, v] of upstream) if (k === name) out.append(to, v);
  }
  return out;
}

export function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Parses a JSON body if it is one; anything else is forwarded untouched. */
export function parseJson(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return null;
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null;
  }
}
