// A new key's limit before its own answers set it (timing.ts has the rules): one request out, then
// one more each step while no answer has come (learning); from its first answer an opening up to
// the learned limit, until a refusal. This holds when each began. Pure: time is passed in.
import { learningLimit, nextLearningStep, nextOpeningStep, type Opening, openingLimit } from "./timing";

export class Ramp {
  /** When a never-answered key sent its first request. */
  #probeAt: number | null = null;
  /** The opening after the first answer (not a refusal), until a refusal. */
  #opening: Opening | null = null;

  /** A request went: the first one starts the learning. */
  sent(now: number): void {
    this.#probeAt ??= now;
  }

  /** The limit in force: while `learning` the ramp's (at most `max`), else the opening's (at most `learned`). */
  limit(now: number, learning: boolean, max: number, learned: number): number {
    // While learning the ramp is the limit, past START_CONCURRENCY if the answer is that slow: a
    // refusal would have come back and ended it, and a 3 s answer at 600 RPM needs 30 out.
    if (learning) return Math.min(max, learningLimit(this.#probeAt, now));
    return this.#opening ? openingLimit(this.#opening, now, learned) : learned;
  }

  /** When `limit` (the limit in force now) next rises by a step of the ramp or the opening; null when neither is under way. */
  nextStep(now: number, learning: boolean, limit: number, max: number, learned: number): number | null {
    if (learning && this.#probeAt !== null && limit < max) return nextLearningStep(this.#probeAt, now);
    if (this.#opening && limit < learned) return nextOpeningStep(this.#opening, now);
    return null;
  }

  /** The first answer opens the key: gradually (timing.ts, `opening`), or at once (null). */
  open(opening: Opening | null): void {
    this.#opening = opening;
  }

  /** A refusal: the learned limit decides from here. */
  refused(): void {
    this.#opening = null;
  }

  /** A reset key learns again from its next request. */
  reset(): void {
    this.#probeAt = null;
    this.#opening = null;
  }
}
