/** `LOG_LEVEL`, as the seeds' users know it: each level shows itself and everything more severe. */
export type Level = "error" | "warn" | "info" | "debug";

export const LEVELS: readonly Level[] = ["error", "warn", "info", "debug"];
export const DEFAULT_LEVEL: Level = "info";

/**
 * Case-insensitive; unset or unknown means `info`. A typo in a logging knob must not take the
 * gateway down (unlike a limit variable, where guessing would change what callers get).
 */
export function parseLevel(raw: unknown): Level {
  const v = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  return (LEVELS as readonly string[]).includes(v) ? (v as Level) : DEFAULT_LEVEL;
}

/** True when a line of `level` passes a threshold of `threshold`. */
export function shows(threshold: Level, level: Level): boolean {
  return LEVELS.indexOf(level) <= LEVELS.indexOf(threshold);
}

/**
 * How many lines one emitter (one limiter, or one Worker isolate) may write: a token bucket of
 * BURST lines refilled at PER_SECOND. A 429 storm of thousands of attempts a second then writes
 * BURST lines at once and PER_SECOND after that; the rest are counted, not written.
 */
export const BURST = 50;
export const PER_SECOND = 5;

export interface Budget {
  tokens: number;
  at: number;
  /** Lines dropped since the last one written. */
  dropped: number;
  /** Lines dropped in all (a counter for the metrics). */
  droppedTotal: number;
}

export function newBudget(now: number): Budget {
  return { tokens: BURST, at: now, dropped: 0, droppedTotal: 0 };
}

/**
 * Takes one line's worth. Returns null when the line must be dropped, else how many lines were
 * dropped before it (the written line says so, so a reader knows the log has a hole and how big).
 */
export function admit(b: Budget, now: number): number | null {
  const elapsed = Math.max(0, now - b.at);
  b.tokens = Math.min(BURST, b.tokens + (elapsed * PER_SECOND) / 1_000);
  b.at = Math.max(b.at, now);
  if (b.tokens < 1) {
    b.dropped += 1;
    b.droppedTotal += 1;
    return null;
  }
  b.tokens -= 1;
  const before = b.dropped;
  b.dropped = 0;
  return before;
}

/** Where a line goes: the console method of its level, so Workers Logs files it under that level. */
export type Sink = (level: Level, line: string) => void;

export const consoleSink: Sink = (level, line) => {
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else if (level === "debug") console.debug(line);
  else console.log(line);
};
