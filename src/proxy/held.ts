import { gatewayError } from "./errors";

// Request bodies are held, whole, while their requests queue and retry, and the cache keeps a copy
// of each answer it will store until the copy is in R2. Many large ones in one isolate would outgrow
// its 128 MB: past BODY_BUDGET_BYTES held, a new body is refused (503 `overloaded`, retry-after)
// before it is read, and a copy stops being kept, rather than the isolate running out of memory.

/** A copy that grows as its bytes arrive, each only while the budget has room for it. */
export interface Growing {
  /** Takes `bytes` more; false (and nothing taken) when they would not fit. */
  grow(bytes: number): boolean;
  /** Gives back all it took; idempotent, and nothing grows after it. */
  release(): void;
}

/** Bytes held in one isolate, against a budget each caller names. */
export class HeldBudget {
  #held = 0;

  /** Bytes held now. */
  get bytes(): number {
    return this.#held;
  }

  /**
   * Reserves a request body's `bytes`; returns the release (idempotent), or null when the isolate
   * already holds too much. A body alone is always taken, whatever its size, or it could never go.
   */
  hold(bytes: number, budget: number): (() => void) | null {
    if (bytes > 0 && this.#held > 0 && this.#held + bytes > budget) return null;
    this.#held += bytes;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#held -= bytes;
    };
  }

  /**
   * A copy held chunk by chunk. Unlike a body it is never taken past the budget, even alone: the
   * request can do without it (its answer still streams, it is just not stored).
   */
  growing(budget: number): Growing {
    let mine = 0;
    let open = true;
    return {
      grow: (bytes) => {
        if (!open || this.#held + bytes > budget) return false;
        this.#held += bytes;
        mine += bytes;
        return true;
      },
      release: () => {
        open = false;
        this.#held -= mine;
        mine = 0;
      },
    };
  }
}

/** The isolate's budget: every request and every cache copy in this isolate count against it. */
export const isolateHeld = new HeldBudget();

/** Bytes this isolate holds now. */
export const heldBytes = () => isolateHeld.bytes;

/** `isolateHeld.hold`: a request body against the isolate's budget. */
export const hold = (bytes: number, budget: number) => isolateHeld.hold(bytes, budget);

/** What a body will take: its declared length (capped), or the most it may be. */
export function expectedBytes(headers: Headers, max: number): number {
  const n = Number(headers.get("content-length") ?? Number.NaN);
  return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, max) : max;
}

/**
 * The body stage: a request's body is reserved in the isolate's budget before it is read. Returns
 * the release, or 503 `overloaded`, the body read to its end and dropped as it comes (nothing
 * held), so the caller gets this answer rather than a broken pipe.
 */
export async function holdBody(req: Request, hasBody: boolean, gw: { maxBodyBytes: number; bodyBudgetBytes: number }): Promise<(() => void) | Response> {
  const letGo = hold(hasBody ? expectedBytes(req.headers, gw.maxBodyBytes) : 0, gw.bodyBudgetBytes);
  if (letGo) return letGo;
  await req.body?.pipeTo(new WritableStream()).catch(() => {});
  return gatewayError("overloaded", "this gateway instance holds too many queued request bodies (BODY_BUDGET_BYTES); try again shortly", { "retry-after": "1" });
}
