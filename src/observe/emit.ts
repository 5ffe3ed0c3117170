import { EVENT_LEVEL, formatLine, type LimiterEvent } from "./events";
import { admit, type Budget, type Level, newBudget, shows, type Sink } from "./log";

/**
 * Writes events as JSON lines: filtered by LOG_LEVEL first (a filtered line costs nothing and
 * takes nothing from the budget), then rate-bounded by one token bucket per emitter.
 */
export class EventLog {
  readonly budget: Budget;
  private level: Level;
  private sink: Sink;

  constructor(level: Level, sink: Sink, now: number) {
    this.level = level;
    this.sink = sink;
    this.budget = newBudget(now);
  }

  /** Cheap test before building a debug event at all. */
  wants(level: Level): boolean {
    return shows(this.level, level);
  }

  emit(key: string, events: readonly LimiterEvent[], now: number): void {
    for (const e of events) {
      const level = EVENT_LEVEL[e.event];
      if (!shows(this.level, level)) continue;
      const suppressed = admit(this.budget, now);
      if (suppressed === null) continue;
      this.sink(level, formatLine(e, key, now, suppressed));
    }
  }
}
