// Time limits on one upstream attempt: a provider that hangs must not hold its slot for as long
// as the caller cares to wait. Either limit running out is transient: retried, never a cut.

export type SetTimer = (fn: () => void, ms: number) => unknown;
export type ClearTimer = (handle: unknown) => void;

/** Why an attempt's signal fired: the provider was silent too long (the caller leaving is the caller's own signal). */
export class UpstreamTimeout extends Error {}

/**
 * The signal an attempt's fetch gets: it follows the caller's, and fires on its own when the
 * response headers take longer than `headersMs`, or a read of the body waits longer than `idleMs`.
 */
export class AttemptTimer {
  readonly signal: AbortSignal;
  /** Set once a limit ran out (not when the caller left). */
  timedOut = false;
  #ctrl = new AbortController();
  #caller: AbortSignal;
  #idleMs: number;
  #headers: unknown;
  #setTimer: SetTimer;
  #clearTimer: ClearTimer;
  #follow = () => this.#ctrl.abort(this.#caller.reason);

  constructor(caller: AbortSignal, headersMs: number, idleMs: number, setTimer: SetTimer = setTimeout, clearTimer: ClearTimer = (h) => clearTimeout(h as number)) {
    this.#caller = caller;
    this.#idleMs = idleMs;
    this.#setTimer = setTimer;
    this.#clearTimer = clearTimer;
    this.signal = this.#ctrl.signal;
    if (caller.aborted) this.#follow();
    else caller.addEventListener("abort", this.#follow);
    this.#headers = setTimer(() => this.#expire("the provider sent no response headers in time (UPSTREAM_TIMEOUT_MS)"), headersMs);
  }

  /** The headers came: from here on only the idle limit applies, to each read of the body. */
  answered(): void {
    this.#clearTimer(this.#headers);
  }

  /**
   * `body` as it comes, cut with an error (never a clean end: a truncated answer must not look
   * whole) when a chunk takes longer than the idle limit.
   */
  watch(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (c) => {
        const timer = this.#setTimer(() => {
          this.#expire("the provider's answer went silent (STREAM_IDLE_MS)");
          reader.cancel(this.signal.reason).catch(() => {});
        }, this.#idleMs);
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } finally {
          this.#clearTimer(timer);
        }
        if (this.timedOut) throw this.signal.reason;
        if (chunk.done) c.close();
        else c.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }

  /**
   * One idle limit over a whole read (a plain answer read to its end by the caller of this, with
   * no stream of its own in between): `touch` when a chunk came; when none came for the idle
   * limit, the reader is cancelled and `timedOut` set, so the read ends short and is known to.
   * One timer for the whole read, however many chunks: it looks again when it fires early.
   */
  idle(reader: ReadableStreamDefaultReader<Uint8Array>): { touch: () => void; done: () => void } {
    let last = Date.now();
    let timer: unknown;
    const check = () => {
      const quiet = Date.now() - last;
      if (quiet < this.#idleMs) return void (timer = this.#setTimer(check, this.#idleMs - quiet));
      this.#expire("the provider's answer went silent (STREAM_IDLE_MS)");
      reader.cancel(this.signal.reason).catch(() => {});
    };
    timer = this.#setTimer(check, this.#idleMs);
    return { touch: () => void (last = Date.now()), done: () => this.#clearTimer(timer) };
  }

  /** The attempt is over: no timer may fire for it, and the caller's signal lets go of it. */
  stop(): void {
    this.#clearTimer(this.#headers);
    this.#caller.removeEventListener("abort", this.#follow);
  }

  #expire(message: string): void {
    if (this.signal.aborted) return;
    this.timedOut = true;
    this.#ctrl.abort(new UpstreamTimeout(message));
  }
}
