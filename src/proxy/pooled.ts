// What a pooled request's retry loop needs beyond a plain one's: when a member's answer takes it
// out of its pool, and the answer when no member is in.
import type { OutcomeClass } from "../policy/types";
import { gatewayError, retryAfterSeconds } from "./errors";

/**
 * The reason an answer takes a member out (its key cannot be used: hard quota, 401, 403), or
 * undefined. The reason is the provider's error code where it gives one, else the status.
 */
export function outReason(cls: OutcomeClass, status: number, body: unknown): string | undefined {
  if (cls !== "hard_quota" && status !== 401 && status !== 403) return undefined;
  const e = typeof body === "object" && body !== null ? (body as { error?: { code?: unknown; type?: unknown } }).error : undefined;
  const code = typeof e?.code === "string" ? e.code : typeof e?.type === "string" ? e.type : null;
  return code && /^[a-z0-9_.-]{1,64}$/i.test(code) ? code : String(status);
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
