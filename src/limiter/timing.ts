// The limiter's timing rules that are not AIMD's: how a new key opens, how often a lease is
// renewed, when a reading was true, and the margins that absorb what a real network does to evenly
// granted requests. Pure.
import type { Outcome } from "./state";

/** How often a Worker renews a lease it holds; a restored lease is given about this long. */
export const renewEvery = (ttlMs: number) => Math.max(250, Math.floor(ttlMs / 3));

/** How long a new key's first request goes alone unless its answer comes sooner. */
export const LEARN_MS = 1_000;
/** After that, while no answer has come, one more may go out each LEARN_STEP_MS. */
export const LEARN_STEP_MS = 50;

/**
 * Two requests granted some time apart can reach the provider this much closer together (the
 * Worker's send, the network: 42 ms seen through wrangler dev). A request waits for this much
 * more refill than it needs, so the second does not find the bucket a few tokens short.
 */
export const SEND_JITTER_MS = 50;

/** How long after its hint a claim waits for its retry (the Worker's pause, then its call). */
export const CLAIM_GRACE_MS = 1_000;

/**
 * A provider counts a request when it arrives, some time after the Worker sent it: a network leg,
 * a new connection's handshake (up to 86 ms measured through wrangler dev on a loaded machine; a
 * provider a continent away adds tens more). Readings are dated this long after the send (or at
 * the answer, if sooner): a date too late costs a constant lag, one too early costs 429s.
 */
export const ADMISSION_LAG_MS = 150;

/**
 * How many may be out while a key has had no answer: 1 until LEARN_MS after its probe went (a
 * refusal comes back fast, so one unrefused that long was admitted), then one more each
 * LEARN_STEP_MS. A slow answer says nothing yet of how much is left, so the key opens gradually:
 * a refusal and its reading come back before many more have gone, and a long answer does not
 * keep a roomy key idle.
 */
export function learningLimit(probeAt: number | null, now: number): number {
  if (probeAt === null || now - probeAt < LEARN_MS) return 1;
  return 2 + Math.floor((now - probeAt - LEARN_MS) / LEARN_STEP_MS);
}

/**
 * A new key opens after its first answer over half an answer's time, not all at once: half of
 * START_CONCURRENCY at once, then one more slot a step (the first answer's latency over
 * START_CONCURRENCY, at most LEARN_STEP_MS). A refusal comes back faster than an answer, so a
 * concurrency cap between the two halves refuses one request, not every request of a burst past
 * it, and a roomy key is at START_CONCURRENCY within half an answer (slow start goes on meanwhile).
 */
export interface Opening {
  /** When the first answer came, the slots it opened from (one less than it opens at once), the limit then, and the time between two more slots. */
  at: number;
  from: number;
  limit: number;
  stepMs: number;
}

export function opening(at: number, busy: number, limit: number, firstLatencyMs: number, start: number): Opening {
  const latency = Number.isFinite(firstLatencyMs) && firstLatencyMs > 0 ? firstLatencyMs : 0;
  return { at, from: Math.max(busy, Math.floor(start / 2) - 1), limit, stepMs: Math.min(LEARN_STEP_MS, Math.floor(latency / Math.max(1, start))) };
}

/**
 * The slots the opening allows now, with the limit's growth since it began (slow start's successes
 * count as they would without it); the first answer itself frees one at once.
 */
export function openingLimit(o: Opening, now: number, limit: number): number {
  const steps = o.stepMs > 0 ? stepsSince(o, now) : Infinity;
  return Math.min(limit, o.from + 1 + steps + Math.max(0, limit - o.limit));
}

/** When openingLimit next rises by a step. */
export function nextOpeningStep(o: Opening, now: number): number {
  return o.at + o.stepMs * (stepsSince(o, now) + 1);
}

/** Whole steps since the opening began; a hair of slack, so a pump at nextOpeningStep's time always counts that step (times need not be whole ms). */
const stepsSince = (o: Opening, now: number) => Math.floor(Math.max(0, now - o.at) / o.stepMs + 1e-9);

/** When learningLimit next rises. */
export function nextLearningStep(probeAt: number, now: number): number {
  return probeAt + LEARN_MS + LEARN_STEP_MS * (learningLimit(probeAt, now) - 1);
}

/**
 * When an outcome's reading was true: ADMISSION_LAG_MS after the Worker sent the attempt, or when
 * it saw the answer if sooner, and never before the grant. Later rather than earlier, so refill is
 * never over-counted. Undefined for a lease the core no longer knows (the reading is taken as now).
 */
export function readingDate(o: Pick<Outcome, "ageMs" | "latencyMs">, grantedAt: number | undefined, now: number): number | undefined {
  if (grantedAt === undefined) return undefined;
  const seenAt = now - Math.max(0, o.ageMs ?? 0);
  const sentAt = Number.isFinite(o.latencyMs) && o.latencyMs >= 0 ? seenAt - o.latencyMs : seenAt;
  return Math.max(grantedAt, Math.min(seenAt, sentAt + ADMISSION_LAG_MS));
}
