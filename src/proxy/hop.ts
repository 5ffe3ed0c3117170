// Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, never the message, so a
// proxy drops them both ways, with every header the `Connection` header names.

const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"]);

/** Whether a header of this message is hop-by-hop: a fixed one, a `proxy-*` one, or one `Connection` names. */
export function hopByHop(h: Headers): (name: string) => boolean {
  const connection = h.get("connection");
  if (connection === null) return fixedHop;
  const named = new Set(connection.split(",").map((t) => t.trim().toLowerCase()).filter(Boolean));
  return (name) => fixedHop(name) || named.has(name);
}

/** The hop-by-hop headers of a message with no `Connection` header. */
const fixedHop = (name: string) => HOP.has(name) || name.startsWith("proxy-");
