/**
 * @module What a request does after its tier refused it for capacity (OpenAI flex's 429, Groq's
 * 498, Gemini's shed 503): wait and try the tier again while its policy and deadline allow, then go
 * at standard, so no line is lost because the cheap tier was full. And the key's outlook for a
 * tier: the share of its recent attempts the tier refused, so a tier that sheds everything is not
 * tried by every request (a probe now and then finds it back). Pure: time is an argument.
 */
import type { RetryDecision } from "../policy/backoff";
import type { OutcomeClass } from "../policy/types";
import type { Fallback } from "./choose";

/** At most this many refusals of the tier for one request: at 30% shed, 0.8% of requests reach standard. */
export const TIER_TRIES = 4;
/** Of a request's time (arrival to deadline), the share it may spend waiting on its tier; the rest is standard's. */
export const TIER_TIME_SHARE = 0.5;

export type TierStep = { go: "again"; delayMs: number } | { go: "standard" } | { go: "stop" };

export interface AfterRefusal {
  /** The tier's refusals of this request so far, this one included. */
  refusals: number;
  /** How many the key's outlook allows (tiersToTry). */
  tries: number;
  fallback: Fallback;
  /** The retry policy's word on this capacity refusal (policy/backoff.ts): its wait, or why not. */
  retry: RetryDecision;
  /** The attempt that was refused (1-based), and the request's most. */
  attempt: number;
  maxAttempts: number;
  now: number;
  /** When the request arrived, and its deadline (epoch ms). */
  started: number;
  deadline: number;
}

/**
 * After a tier's capacity refusal: again at the tier (after the retry policy's wait) while the
 * tries, the attempts (one kept for standard) and the tier's share of the time allow; else at
 * standard now. With fallback `none` there is no standard to keep time or an attempt for: again
 * while the tries, attempts and deadline allow, then the refusal back (never another tier).
 */
export function afterRefusal(a: AfterRefusal): TierStep {
  const { retry } = a;
  const none = a.fallback === "none";
  const tierUntil = none ? a.deadline : a.started + (a.deadline - a.started) * TIER_TIME_SHARE;
  const again = retry.retry && a.refusals < a.tries && a.attempt < a.maxAttempts - (none ? 0 : 1) && a.now + retry.delayMs <= tierUntil;
  if (again) return { go: "again", delayMs: retry.delayMs };
  if (none) return { go: "stop" };
  return a.attempt < a.maxAttempts && a.now < a.deadline ? { go: "standard" } : { go: "stop" };
}

/** A key's recent experience of one tier. */
export interface Outlook {
  /** Share of recent attempts the tier refused (a moving average). */
  share: number;
  /** Attempts seen (up to a point: only whether it is past MIN_SEEN matters). */
  seen: number;
  /** Refusals in a row since the tier last served (up to a point). */
  run?: number;
  /** While the tier looks shed: when the next request may probe it. */
  probeAt: number;
}

/** Each attempt's weight in the moving share: a tier that refuses everything looks shed after nine, one shedding 30% practically never. */
const WEIGHT = 0.25;
/** Attempts seen before the share is believed. */
export const MIN_SEEN = 8;
/** A share above this: the tier is shed, requests go at standard at once, but for a probe every PROBE_MS. */
export const SHED_SHARE = 0.9;
export const PROBE_MS = 1_000;
/**
 * Refusals in a row that shed the tier before the share says so: a key's concurrent requests all
 * refused at once (a tier shed whole) need not wait out a second round each. At 30% shed, six in a
 * row come once in 1,400 runs, and a tier wrongly shed is probed again within PROBE_MS.
 */
export const SHED_RUN = 6;

export const newOutlook = (): Outlook => ({ share: 0, seen: 0, probeAt: 0, run: 0 });

/** One attempt at the tier: refused for capacity, or not. */
export function noteTierTry(o: Outlook, refused: boolean): void {
  o.share += WEIGHT * ((refused ? 1 : 0) - o.share);
  if (o.seen < MIN_SEEN) o.seen += 1;
  o.run = refused ? Math.min(SHED_RUN, (o.run ?? 0) + 1) : 0;
}

/** Whether the tier looks shed: most recent attempts refused, or the last SHED_RUN in a row. */
export const shed = (o: Outlook) => (o.seen >= MIN_SEEN && o.share >= SHED_SHARE) || (o.run ?? 0) >= SHED_RUN;

/** Whether a request should try the tier now (a tier that sheds everything is probed, not tried by all); a probe takes its turn. */
export function worthTrying(o: Outlook, now: number): boolean {
  if (!shed(o)) return true;
  if (now < o.probeAt) return false;
  o.probeAt = now + PROBE_MS;
  return true;
}

/** How many refusals a request waits through at the tier: its tries, or one when the tier looks shed. */
export const tiersToTry = (o: Outlook): number => (shed(o) ? 1 : TIER_TRIES);

/**
 * An attempt at a tier other than standard was answered: a capacity refusal is waited through at
 * the tier (afterRefusal) or the request goes at standard now (`standard`). Anything else keeps
 * the retry policy's word. `a.refusals` counts this refusal when it is one; `a.tries`, how many
 * the outlook allows (tiersToTry: the gateway's key learns it in its object, limiter/tier-outlooks.ts).
 */
export function tierRetry(cls: OutcomeClass, retry: RetryDecision, a: Omit<AfterRefusal, "retry">): { retry: RetryDecision; standard?: true } {
  if (cls !== "capacity") return { retry };
  const step = afterRefusal({ ...a, retry });
  if (step.go === "again") return { retry: { retry: true, delayMs: step.delayMs } };
  if (step.go === "stop") return { retry: retry.retry ? { retry: false, reason: "attempts_exhausted" } : retry };
  return { retry: { retry: true, delayMs: 0 }, standard: true };
}
