// The lease ids whose records a limiter counted lately, so a record carried twice (an op sent
// again after a failed batch) is counted once even after its row left the outbox.

/** Ids remembered; the oldest is forgotten first. A resent op comes within seconds of the first. */
const KEPT = 4_096;

export class RecentIds {
  private ids = new Set<string>();

  /** Notes an id; false if it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > KEPT) this.ids.delete(this.ids.values().next().value as string);
    return true;
  }
}
