import { concat } from "../proxy/forward";
import type { Growing } from "../proxy/held";

/**
 * Passes a body through to the caller unchanged while keeping a copy, up to `max` bytes and only
 * while `held` (the isolate's budget of held bytes) takes each chunk. `done` gets the copy once the
 * body has ended whole, or null when it was larger than `max`, did not fit the budget, failed, or
 * the caller left before the end: only whole answers are ever stored. A copy given up gives its
 * bytes back at once; a whole one is `held` until the caller releases it (once it is stored).
 */
export function capture(body: ReadableStream<Uint8Array> | null, max: number, held: Growing, done: (copy: Uint8Array | null) => void): ReadableStream<Uint8Array> | null {
  if (!body) {
    done(new Uint8Array(0));
    return null;
  }
  const reader = body.getReader();
  let chunks: Uint8Array[] | null = [];
  let size = 0;
  let ended = false;
  const drop = () => {
    chunks = null;
    held.release();
  };
  const end = (copy: Uint8Array | null) => {
    if (ended) return;
    ended = true;
    if (!copy) drop();
    chunks = null;
    done(copy);
  };
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (err) {
        end(null);
        c.error(err);
        return;
      }
      if (r.done) {
        end(chunks ? concat(chunks, size) : null);
        c.close();
        return;
      }
      size += r.value.byteLength;
      if (chunks && size <= max && held.grow(r.value.byteLength)) chunks.push(r.value);
      else if (chunks) drop();
      c.enqueue(r.value);
    },
    cancel(reason) {
      end(null);
      return reader.cancel(reason);
    },
  });
}
