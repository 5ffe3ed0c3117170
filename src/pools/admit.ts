// The request path's first stage: who may call through. Without GATEWAY_TOKENS, anyone (their own
// provider key is their credential). With it, a caller brings one of the tokens, or a virtual key
// this gateway minted and still holds: a virtual key is itself a gateway credential, so its holder
// needs no second secret. Everyone else gets one and the same 401 before anything else is looked
// at: a stranger learns nothing, not even which providers or variables exist.
import { gatewayTokenOk } from "../auth";
import { ConfigError } from "../config/env";
import type { Env } from "../env";
import { readKey } from "../keys/format";
import { type Resolved, resolveKey } from "../keys/lookup";
import { KeyStoreUnavailable, keyStoreUnavailable } from "../keys/store";
import { gatewayError } from "../proxy/errors";
import { virtualKeyIn } from "./member";

/** The key a caller presented, already looked up (pools/stage.ts takes it from here). */
export type Found = Extract<Resolved, { kind: "key" }>;

export type Admission = { kind: "in"; found?: Found } | { kind: "refused"; res: Response };

export const SHUT = "x-slotgate-token is missing or not one of GATEWAY_TOKENS, and no valid virtual key was presented";

const IN: Admission = { kind: "in" };

/**
 * A listed token lets anyone in; else a virtual key with the gateway's own check that the store
 * still holds. A forged key costs an HMAC, never a store call (keys/lookup.ts); a key of the old
 * format, which carries no check, still needs a token, so random strings of its shape cannot reach
 * the store. Forged, unknown, revoked or absent: the same 401.
 */
export async function admit(env: Env, req: Request, url: URL = new URL(req.url)): Promise<Admission> {
  if (await gatewayTokenOk(env.GATEWAY_TOKENS, req.headers.get("x-slotgate-token"))) return IN;
  const presented = virtualKeyIn(req.headers, url);
  if (presented !== null && readKey(presented).format === "tagged") {
    try {
      const found = await resolveKey(env, presented);
      if (found.kind === "key") return { kind: "in", found };
    } catch (err) {
      // Only a key whose check passed gets this far: the store's trouble is its holder's to hear.
      if (err instanceof KeyStoreUnavailable) return { kind: "refused", res: keyStoreUnavailable(err) };
      // No secret to check keys with: no virtual key can be valid.
      if (!(err instanceof ConfigError)) throw err;
    }
  }
  return { kind: "refused", res: gatewayError("unauthorized", SHUT) };
}
