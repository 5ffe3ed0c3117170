// What a pooled request's retry loop needs beyond a plain one's: when a member's answer takes it
// out of its pool, and the answer when no member is in.
import { gatewayError, retryAfterSeconds } from "./errors";

/** Response headers that name a member's account or carry its session: a virtual key's holder sees none of them. */
const MEMBER_ONLY = ["openai-organization", "openai-project", "anthropic-organization-id", "set-cookie", "apim-request-id"];
/**
 * Families of headers that tell members apart: their quota windows (a limit is a tier), renamed on
 * a success (`x-slotgate-provider-*`) or as sent on an error, and Azure's own (`x-ms-region`,
 * `x-ms-deployment-name`, `azureml-model-session`). `retry-after` stays: SDKs need it.
 */
const MEMBER_FAMILIES = /^(?:x-slotgate-provider-|x-ratelimit-|anthropic-ratelimit-|ratelimit|x-ms-|azureml-)/;

export function hideMember(headers: Headers): void {
  for (const h of MEMBER_ONLY) headers.delete(h);
  for (const h of [...headers.keys()]) if (MEMBER_FAMILIES.test(h)) headers.delete(h);
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
