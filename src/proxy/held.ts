import { gatewayError } from "./errors";
import { concat } from "./forward";

// Request bodies are held, whole, while their requests queue and retry, and the cache keeps a copy
// of each answer it will store until the copy is in R2. Many large ones in one isolate would outgrow
// its 128 MB: past BODY_BUDGET_BYTES held, a body stops being read (503 `overloaded`, retry-after)
// and a copy stops being kept, rather than the isolate running out of memory. A body counts as its
// bytes arrive, never at the length it declares: a body that has not come holds nothing, however
// large it says it is, and it has BODY_TIMEOUT_MS to come.

/** A body or copy that grows as its bytes arrive, each only while the budget has room for it. */
export interface Growing {
  /** Takes `bytes` more; false (and nothing taken) when they would not fit. */
  grow(bytes: number): boolean;
  /** Gives back all it took; idempotent, and nothing grows after it. */
  release(): void;
}

/** Bytes held in one isolate, against a budget each caller names. */
export class HeldBudget {
  private held = 0;

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /**
   * A request body, held chunk by chunk as it arrives. A body alone is always taken, whatever its
   * size, or it could never go; beside others, only while they all fit.
   */
  body(budget: number): Growing {
    return this.grower((bytes, mine) => this.held === mine || this.held + bytes <= budget);
  }

  /**
   * A copy held chunk by chunk. Unlike a body it is never taken past the budget, even alone: the
   * request can do without it (its answer still streams, it is just not stored).
   */
  growing(budget: number): Growing {
    return this.grower((bytes) => this.held + bytes <= budget);
  }

  private grower(fits: (bytes: number, mine: number) => boolean): Growing {
    let mine = 0;
    let open = true;
    return {
      grow: (bytes) => {
        if (!open || !fits(bytes, mine)) return false;
        this.held += bytes;
        mine += bytes;
        return true;
      },
      release: () => {
        open = false;
        this.held -= mine;
        mine = 0;
      },
    };
  }
}

/** The isolate's budget: every request and every cache copy in this isolate count against it. */
export const isolateHeld = new HeldBudget();

/** Bytes this isolate holds now. */
export const heldBytes = () => isolateHeld.bytes;

export interface BodyLimits {
  maxBodyBytes: number;
  bodyBudgetBytes: number;
  bodyTimeoutMs: number;
}

const EMPTY = { bytes: new Uint8Array(0), release: () => {} };

/**
 * The body stage: the body read as it arrives, each chunk counted in the isolate's budget as it
 * comes, within BODY_TIMEOUT_MS. Returns the bytes and their release (idempotent); 413
 * `body_too_large` past MAX_BODY_BYTES; 408 `request_timeout` when it takes longer; 503
 * `overloaded` when the isolate holds too much, the rest read and dropped as it comes (nothing
 * held, within the same time), so the caller gets this answer rather than a broken pipe.
 */
export async function readBody(req: Request, hasBody: boolean, gw: BodyLimits, budget: HeldBudget = isolateHeld): Promise<{ bytes: Uint8Array; release: () => void } | Response> {
  if (!hasBody || !req.body) return EMPTY;
  const tooLarge = () => gatewayError("body_too_large", `the body is over MAX_BODY_BYTES (${gw.maxBodyBytes})`);
  if (Number(req.headers.get("content-length") ?? "0") > gw.maxBodyBytes) return tooLarge();
  const held = budget.body(gw.bodyBudgetBytes);
  const reader = req.body.getReader();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    reader.cancel().catch(() => {});
  }, gw.bodyTimeoutMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let full = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || late) break;
      size += value.byteLength;
      if (size > gw.maxBodyBytes) {
        held.release();
        await reader.cancel().catch(() => {});
        return tooLarge();
      }
      if (!full && !held.grow(value.byteLength)) {
        full = true;
        held.release();
        chunks.length = 0;
      }
      if (!full) chunks.push(value);
    }
  } catch {
    held.release();
    return gatewayError("invalid_request", "the request body broke off before its end");
  } finally {
    clearTimeout(timer);
  }
  if (late) {
    held.release();
    return gatewayError("request_timeout", `the body did not arrive within BODY_TIMEOUT_MS (${gw.bodyTimeoutMs} ms)`);
  }
  if (full) return gatewayError("overloaded", "this gateway instance holds too many queued request bodies (BODY_BUDGET_BYTES); try again shortly", { "retry-after": "1" });
  return { bytes: concat(chunks, size), release: held.release };
}
