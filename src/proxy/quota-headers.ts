import { QUOTA_HEADERS, spelled } from "../providers/headers";

/**
 * The provider's quota headers on an answer the caller gets as a success. The gateway owns the
 * key's limit, and paces right at it, so the provider's `remaining` is often 0 on a 2xx: clients
 * that read it (promptfoo throws such an answer away and sends the request again) would stop or
 * repeat work the gateway has already scheduled. They are passed on under this prefix instead,
 * still readable; `x-slotgate-limit` and `x-slotgate-rate` describe the gateway's own pacing.
 * Error answers keep them as they are: the caller gets the provider's own last word.
 */
export const PROVIDER_PREFIX = "x-slotgate-provider-";

/** The IETF draft's RateLimit fields, and retry hints. */
const QUOTA = /^(ratelimit($|-)|retry-after($|-ms$))/;

/** The providers' rate-limit families (their rows'), the IETF draft's fields, and retry hints. */
export const isQuotaHeader = (name: string) => spelled(name, QUOTA_HEADERS) || QUOTA.test(name);

/** A header's name on a success the caller gets: a quota header's under the prefix, the rest as they are. */
export const renamedQuota = (name: string): string => (isQuotaHeader(name) ? `${PROVIDER_PREFIX}${name}` : name);
