import { concat } from "../proxy/forward";

/**
 * Passes a body through to the caller unchanged while keeping a copy, up to `max` bytes. `done`
 * gets the copy once the body has ended whole, or null when it was larger than `max`, failed, or
 * the caller left before the end: only whole answers are ever stored.
 */
export function capture(body: ReadableStream<Uint8Array> | null, max: number, done: (copy: Uint8Array | null) => void): ReadableStream<Uint8Array> | null {
  if (!body) {
    done(new Uint8Array(0));
    return null;
  }
  const reader = body.getReader();
  let chunks: Uint8Array[] | null = [];
  let size = 0;
  let ended = false;
  const end = (copy: Uint8Array | null) => {
    if (ended) return;
    ended = true;
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
      if (chunks && size <= max) chunks.push(r.value);
      else chunks = null;
      c.enqueue(r.value);
    },
    cancel(reason) {
      end(null);
      return reader.cancel(reason);
    },
  });
}
