// Who is asking, from the request's headers: the caller and lane the key's limiter files it under.
import { ConfigError } from "../config/env";
import { isLane, type Lane, parseWeights } from "../limiter/lanes";
import { LABEL, sha256Hex16 } from "../providers/key";

export interface Who {
  /** A label, or `token:<hash>`; absent: the key's default caller. */
  caller?: string;
  priority?: Lane;
}

/** The last PRIORITY_WEIGHTS found good: vars do not change within an isolate, so it is parsed once. */
let goodWeights: string | undefined | null = null;

/** A malformed PRIORITY_WEIGHTS is refused like every other variable: 500 config_error, nothing sent. */
export function checkWeights(raw: string | undefined): void {
  if (raw === goodWeights) return;
  const w = parseWeights(raw);
  if (typeof w === "string") throw new ConfigError(w);
  goodWeights = raw;
}

/**
 * `x-slotgate-caller` names the caller (the same characters as `x-slotgate-limit-key`). Where
 * GATEWAY_TOKENS is set, the caller is its gateway token, as a hash (the token itself is never
 * stored or shown), and a label names a caller within it (`token:<hash>/<label>`): no label takes
 * another token's identity or share. Without either, the key's default caller, as before callers
 * existed. `x-slotgate-priority` is high, normal (the default) or low. Returns the reason a header is refused.
 */
export async function whoIsAsking(headers: Headers, gatewayTokens: string | undefined): Promise<Who | string> {
  const who: Who = {};
  const priority = headers.get("x-slotgate-priority");
  if (priority !== null) {
    const lane = priority.trim().toLowerCase();
    if (!isLane(lane)) return "x-slotgate-priority must be high, normal or low";
    who.priority = lane;
  }
  const label = headers.get("x-slotgate-caller");
  const token = headers.get("x-slotgate-token");
  if (label !== null && !LABEL.test(label)) return "x-slotgate-caller must be 1-128 of A-Z a-z 0-9 . _ @ + / -";
  // A prefix of its own, so this hash never equals one made of the same string elsewhere.
  const base = token && (gatewayTokens ?? "").split(",").some((t) => t.trim() !== "") ? `token:${await sha256Hex16(`slotgate-caller\n${token}`)}` : null;
  if (base !== null || label !== null) who.caller = base === null ? label! : label === null ? base : `${base}/${label}`;
  return who;
}
