// Request bodies are held, whole, while their requests queue and retry. Many large ones in one
// isolate would outgrow its 128 MB: past BODY_BUDGET_BYTES of bodies held, a new one is refused
// (503 `overloaded`, retry-after) before it is read, rather than the isolate running out of memory.

let held = 0;

/** Bytes of request bodies this isolate holds now. */
export const heldBytes = () => held;

/**
 * Reserves `bytes` of the budget; returns the release (idempotent), or null when the isolate
 * already holds too much. A body alone is always taken, whatever its size, or it could never go.
 */
export function hold(bytes: number, budget: number): (() => void) | null {
  if (bytes > 0 && held > 0 && held + bytes > budget) return null;
  held += bytes;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    held -= bytes;
  };
}

/** What a body will take: its declared length (capped), or the most it may be. */
export function expectedBytes(headers: Headers, max: number): number {
  const n = Number(headers.get("content-length") ?? Number.NaN);
  return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, max) : max;
}
