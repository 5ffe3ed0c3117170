/**
 * @module The order of a key's ticket epochs (policy.ts). An epoch changes whenever the tickets out
 * are taken back; an isolate uses no ticket of an older one than the newest it has heard. So epochs
 * must be ordered, across the object's restarts too: each life starts EPOCH_SPAN above the last
 * one's first epoch (written before any answer of that life leaves), and counts up from there.
 * Replies overtake each other on their way to an isolate; a late one must never bring an older
 * epoch back (with its tickets, which a 429 took back). Pure.
 */

/** How far a life's first epoch is above the last life's: more epochs than any life counts. */
export const EPOCH_SPAN = 2 ** 30;

/** The first epoch of a new life: above every epoch of the last (`saved`, that life's first), else a random start. */
export function firstEpoch(saved: number | null, random: number): number {
  return saved !== null && Number.isSafeInteger(saved) && saved >= 0 ? saved + EPOCH_SPAN : Math.floor(random * 2 ** 31);
}

/**
 * Whether an isolate takes the epoch a reply brings. `after`: the reply's batch left after the
 * reply that set the current epoch had arrived, so the object answered it later (adopt whatever it
 * says, a fresh object's lower epoch too). Otherwise the two crossed on the way: the higher wins.
 */
export function adopts(current: number | undefined, heard: number, after: boolean): boolean {
  return current === undefined || after || heard > current;
}
