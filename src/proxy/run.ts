// The retry loop: acquire, send, settle, and retry what policy says to retry, until an answer
// the caller should see. The steps are steps.ts's; the request's record across them, attempts.ts's.
import { AGAIN, Attempts, GONE } from "./attempts";
import type { LimiterCalls } from "./limiter-client";
import type { Deps, Plan } from "./plan";
import { acquireSlot, pickTarget, send, settleError, settleSuccess } from "./steps";

export type { Deps, Plan } from "./plan";

/**
 * Sends one caller request as many times as policy allows, and answers with what the caller
 * should see. The slot of a successful attempt is held until its body has been streamed out.
 * `limiter`: the key's; null only with `plan.route`, whose members bring their own.
 */
export async function run(plan: Plan, limiter: LimiterCalls | null, deps: Deps): Promise<Response> {
  const s = new Attempts(plan, limiter, deps);
  for (;;) {
    // An abort listener never fires on a signal already aborted: a caller gone during a pause stops here.
    if (s.waiting.aborted) return GONE();
    const at = await pickTarget(s);
    if (at === AGAIN) continue;
    if (at instanceof Response) return at;
    const slot = await acquireSlot(s, at);
    if (slot === AGAIN) continue;
    if (slot instanceof Response) return slot;
    const sent = await send(s, slot);
    if (sent === AGAIN) continue;
    if (sent instanceof Response) return sent;
    const latency = s.now() - slot.sent;
    slot.timer.answered();
    slot.span?.answered(s.now(), sent.res.status);
    const answer = sent.res.status < 400 ? await settleSuccess(s, slot, sent.res, latency) : await settleError(s, slot, sent.res, latency);
    if (answer !== AGAIN) return answer;
  }
}
