// Keys minted before tags carry nothing a Worker can check, and live in the old single instance,
// which nothing writes to any more. Once it has been seen holding no keys it can only stay empty,
// so this isolate refuses legacy-format keys itself: random ones cannot flood that instance either.

/** How long an isolate trusts "empty" before it asks once more (with one request; the rest still refuse). */
export const LEGACY_RECHECK_MS = 5 * 60_000;

/** What this isolate last learned of the old instance; null: never asked. */
export type LegacyView = { empty: boolean; at: number } | null;

/** refuse: known empty, lately. ask: look the key up there (the answer says whether it is empty). */
export function legacyVerdict(view: LegacyView, now: number): "refuse" | "ask" {
  return view?.empty && now - view.at < LEGACY_RECHECK_MS ? "refuse" : "ask";
}

let view: LegacyView = null;

/** true: refuse this legacy-format key here. A stale "empty" lets this one request ask, and holds for the others meanwhile. */
export function legacyRefused(now: number): boolean {
  if (legacyVerdict(view, now) === "refuse") return true;
  if (view?.empty) view = { empty: true, at: now };
  return false;
}

/** What a lookup in the old instance found out. */
export function sawLegacy(empty: boolean, now: number): void {
  view = { empty, at: now };
}

/** Tests: forget what this isolate learned. */
export function forgetLegacy(): void {
  view = null;
}
