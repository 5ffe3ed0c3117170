// The share of a key's prompts its provider reads from its prompt cache, on a key whose tokens
// window leaves those reads out (Anthropic's cache-aware ITPM: a dialect row's `cacheReadsFree`).
// The Worker's estimate counts every prompt byte, so without this a cached prompt is charged whole
// and the key runs at a fraction of what its window allows. Learned from answers' usage, token
// weighted over the last few, and forgotten once the provider's cache would have gone cold. Pure:
// time is passed in.

/** How much each answer before the last still weighs (about the last ten count). */
const DECAY = 0.9;
/**
 * After this long without an answer the provider's cache may have expired (Anthropic's default
 * lifetime is 5 minutes, refreshed by each read), and the next prompts would be written to it,
 * which its window counts: they are charged whole until answers show reads again.
 */
export const CACHE_COLD_MS = 5 * 60_000;

export interface CacheShare {
  /** Decayed sums of prompt tokens read from the cache, and of all prompt tokens. */
  read: number;
  all: number;
  /** When the last answer came. */
  at: number;
}

export const noShare = (): CacheShare => ({ read: 0, all: 0, at: 0 });

/** Whether a key of `model` under this provider row has a window that leaves prompt-cache reads out. */
export const readsFree = (row: { limits: { cacheReadsFree?: { except?: RegExp } } }, model: string): boolean =>
  !!row.limits.cacheReadsFree && !row.limits.cacheReadsFree.except?.test(model);

/** One answer's prompt: `input` tokens in all, `cached` of them read from the cache. */
export function observe(s: CacheShare, input: number, cached: number, now: number): void {
  if (!(input > 0)) return;
  if (now - s.at > CACHE_COLD_MS) s.read = s.all = 0;
  s.read = s.read * DECAY + Math.min(Math.max(0, cached), input);
  s.all = s.all * DECAY + input;
  s.at = now;
}

/** The share now: 0 before any answer, or once the cache would have gone cold. */
export function shareOf(s: CacheShare, now: number): number {
  return s.all > 0 && now - s.at <= CACHE_COLD_MS ? s.read / s.all : 0;
}

/** What a prompt estimated at `cost` is charged: the part the window counts, at least 1. */
export function charged(s: CacheShare, cost: number, now: number): number {
  const share = shareOf(s, now);
  return share > 0 && Number.isFinite(cost) && cost > 1 ? Math.max(1, Math.ceil(cost * (1 - share))) : cost;
}
