// One request's session with one key's limiter (Limiter.session): opened by its first acquire,
// then every later op the request makes of that key is a line on a stream the object reads, and
// the answers the request waits for come back by number on a stream it reads. One call a request,
// whatever the queue. Streams belong to the request that opened them, and only it writes or
// reads them.
import { line, lines } from "../limiter/lines";
import type { Op, OpResult, SessionAnswer } from "../limiter/types";

/** The session's stream broke (the object restarted, or is gone): the op goes on a call of its own. */
export class SessionBroken extends Error {
  readonly retryable = true;
}

export class Session {
  /** What the object reads: the request's ops after the first. */
  readonly more: ReadableStream<Uint8Array>;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting = new Map<number, { resolve: (r: OpResult) => void; reject: (e: unknown) => void }>();
  #next = 1;
  #ended = false;

  constructor() {
    // The runtime's own byte pipe: an RPC call carries it as it is (a JavaScript TransformStream's
    // chunks would be pumped across by JavaScript), and it costs less to make.
    const { readable, writable } = new IdentityTransformStream();
    this.more = readable;
    this.#writer = writable.getWriter();
  }

  /** Whether ops can still go on it. */
  get open(): boolean {
    return !this.#ended;
  }

  /** The answer to the first op, when it was queued: it comes down the stream as number 0. */
  first(): Promise<OpResult> {
    return this.#expect(0);
  }

  /** Reads the object's answers until the session ends; `waitUntil` keeps the request alive for it. */
  listen(answers: ReadableStream<Uint8Array>, waitUntil: (p: Promise<unknown>) => void): void {
    waitUntil(
      (async () => {
        try {
          for await (const a of lines<SessionAnswer>(answers)) {
            this.#waiting.get(a.n)?.resolve(a.r);
            this.#waiting.delete(a.n);
          }
        } catch {
          // Broken: below, whatever still waits hears so.
        } finally {
          // A session the request closed, with nothing owed, ends quietly (an Error costs its stack).
          if (!this.#ended || this.#waiting.size > 0) this.#end(new SessionBroken("the limiter's session ended before it answered"));
        }
      })(),
    );
  }

  /** An op whose answer the request waits for. */
  ask(op: Op): Promise<OpResult> {
    const n = this.#next++;
    const answer = this.#expect(n);
    this.#write({ ...op, n }).catch((err) => this.#reject(n, err));
    return answer;
  }

  /** A fire-and-forget op. Resolves false when the session could not take it: it is then the caller's to send otherwise. */
  tell(op: Op): Promise<boolean> {
    return this.#write(op).then(
      () => true,
      () => false,
    );
  }

  /** The request is done with this key: the object's reading ends, and so does this session. */
  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#writer.close().catch(() => {});
  }

  #write(v: unknown): Promise<void> {
    if (this.#ended) return Promise.reject(new SessionBroken("the session is closed"));
    return this.#writer.write(line(v));
  }

  #expect(n: number): Promise<OpResult> {
    return new Promise<OpResult>((resolve, reject) => this.#waiting.set(n, { resolve, reject }));
  }

  #reject(n: number, err: unknown): void {
    this.#waiting.get(n)?.reject(err);
    this.#waiting.delete(n);
  }

  #end(err: Error): void {
    this.#ended = true;
    this.#writer.abort(err).catch(() => {});
    for (const w of this.#waiting.values()) w.reject(err);
    this.#waiting.clear();
  }
}
