/**
 * @module A request too large for its key: its limiter turned it away at once (limiter/too-large.ts:
 * its cost is above a limit the provider told and refuses larger requests against), or the provider
 * refused it so (class `too_large`: OpenAI's "Request too large" 429, Groq's 413). A pool may have a
 * member whose limit takes it, so a pooled request goes on to the others; past every member, or on
 * a key of its own, the caller gets the provider's own refusal when one came, else the gateway's
 * 413 `request_too_large`, nothing sent: an SDK does not retry a 413 (OpenAI's raises APIError,
 * Anthropic's ContentTooLargeError), where the provider's 429 would be retried in vain.
 */
import type { TooLarge } from "../limiter/too-large";
import { AGAIN, type Again, type Attempts } from "./attempts";
import { gatewayError } from "./errors";
import type { Target } from "./target";

/** The gateway's answer: the request's estimate and the limit it passes (a pool's members are not told apart). */
export function tooLargeError(cost: number, why: TooLarge | undefined, pool?: string): Response {
  const over = pool !== undefined || !why
    ? `more than any member of pool ${pool ?? ""} takes in one request`
    : `more than the key's limit of ${why.limit} tokens per ${why.periodMs === 60_000 ? "minute" : `${why.periodMs / 1_000} s`}, which its provider refuses a request over however long it waits`;
  return gatewayError("request_too_large", `the request's estimated ${Math.ceil(cost)} tokens are ${over}: ask for fewer (a smaller max_tokens, fewer answers (n), a shorter prompt)`);
}

/**
 * This target's limiter will never take the request. A pool tries its other members (pickTarget
 * passes over those in `tooSmall`); a key of its own answers the caller now.
 */
export function tooLargeAt(s: Attempts, at: Target, why: TooLarge | undefined): Response | Again {
  // An estimate that prices media by their bytes says too little to refuse on: it asks again at the
  // limit, so it goes when the window is full, and the provider decides (its own refusal comes back).
  if (s.plan.unsure && why && (s.capped ?? Infinity) > why.limit) {
    s.capped = why.limit;
    return AGAIN;
  }
  if (!s.route) return s.stamp(tooLargeError(s.plan.cost, why));
  s.tooSmall.add(at);
  s.target = undefined;
  return AGAIN;
}

/** A provider refused the request as too large at `at`: a pool tries another member (steps.ts, settleError). */
export function tooLargeAnswer(s: Attempts, at: Target): void {
  s.tooLargeAnswered = true;
  s.tooSmall.add(at);
}

/** Every member of the pool is too small for it: the provider's own refusal if one came, else the gateway's. */
export function noMemberTakes(s: Attempts): Response {
  return s.stamp(s.tooLargeAnswered && s.last ? s.last : tooLargeError(s.plan.cost, undefined, s.route!.pool));
}
