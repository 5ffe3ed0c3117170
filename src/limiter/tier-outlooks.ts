/**
 * @module A key's outlook of the service tiers it is asked at (issue 39), kept with the key in its
 * object, as its retry-after is: every isolate's attempts at a tier teach the one outlook, and
 * every isolate hears it with its grant. A tier that refuses nearly everything for capacity is
 * shed: one grant a PROBE_MS goes at it (the probe), the others hear how long until the next probe.
 * The policy is tiers/fallback.ts's; this keeps one outlook per tier. Pure: time is an argument.
 */
import type { Tier } from "../providers/dialect";
import { MIN_SEEN, newOutlook, noteTierTry, type Outlook, PROBE_MS, shed, worthTrying } from "../tiers/fallback";

/** What a grant for a shed tier says: go at standard, or wait this long for the tier's probe. */
export interface Shed {
  retryAfterMs: number;
}

export class TierOutlooks {
  #by = new Map<Tier, Outlook>();

  /** An attempt at `tier` was answered at `now`: refused for capacity, or not. A tier it sheds is next probed PROBE_MS on: it just refused. */
  note(tier: Tier, refused: boolean, now: number): void {
    let o = this.#by.get(tier);
    if (!o) this.#by.set(tier, (o = newOutlook()));
    const was = shed(o);
    noteTierTry(o, refused);
    if (!was && shed(o)) o.probeAt = Math.max(o.probeAt, now + PROBE_MS);
  }

  /**
   * Whether a request `tier` just refused may try again at once: the key has the tier shed (its
   * next grant sends it at standard, or gives its refusal back), or is still learning the tier
   * (its first MIN_SEEN attempts: a tier refusing everything is found shed within a round of
   * concurrent requests, none of them waiting out a backoff first). Else the retry's backoff.
   */
  againAtOnce(tier: Tier): boolean {
    const o = this.#by.get(tier);
    return o !== undefined && (shed(o) || o.seen < MIN_SEEN);
  }

  /** For a grant asked at `tier`: null to go at it (it is not shed, or this grant is its probe); else how long until its next probe. */
  shed(tier: Tier, now: number): Shed | null {
    const o = this.#by.get(tier);
    if (!o || worthTrying(o, now)) return null;
    return { retryAfterMs: Math.max(0, o.probeAt - now) };
  }
}
