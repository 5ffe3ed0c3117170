// What a pooled request's retry loop needs beyond a plain one's: when a member's answer takes it
// out of its pool, and the answer when no member is in.
import type { Spellings } from "../providers/flavour";
import { ACCOUNT_HEADERS, MEMBER_HEADERS, QUOTA_HEADERS, spelled } from "../providers/headers";
import { gatewayError, retryAfterSeconds } from "./errors";

/**
 * Response headers that tell members apart, which a virtual key's holder never sees: those naming
 * a member's account or carrying its session; its quota windows (a limit is a tier), renamed on
 * a success (`x-slotgate-provider-*`) or as sent on an error; and the families' own (the rows'
 * `member` headers: a region, a deployment, a session). `retry-after` stays: SDKs need it.
 */
const MEMBER_ONLY: Spellings = [...ACCOUNT_HEADERS, "set-cookie", ...MEMBER_HEADERS, "x-slotgate-provider-", ...QUOTA_HEADERS];
/** The IETF draft's fields and any other `ratelimit*` family. */
const RATELIMIT = /^ratelimit/;

export function hideMember(headers: Headers): void {
  for (const h of [...headers.keys()]) if (spelled(h, MEMBER_ONLY) || RATELIMIT.test(h)) headers.delete(h);
}

/** The answer with a `retry-after` for when a member comes back. */
export function withRetryAfter(res: Response, ms: number): Response {
  res.headers.set("retry-after", retryAfterSeconds(ms));
  return res;
}

/** No member of the pool is in, and this request never reached one. */
export function noMember(pool: string, ms: number): Response {
  return gatewayError("pool_unavailable", `every member of pool ${pool} is out (hard quota or a refused key) and none is back before the request's deadline`, {
    "retry-after": retryAfterSeconds(ms),
  });
}
