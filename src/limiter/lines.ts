// A request's session with a key's limiter carries JSON lines both ways (RPC streams carry bytes
// only): one message a line, in order.

const enc = new TextEncoder();

export const line = (v: unknown): Uint8Array => enc.encode(`${JSON.stringify(v)}\n`);

/** Each JSON line of `stream`, parsed, as it arrives; a line that does not parse ends it with an error. */
export async function* lines<T>(stream: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true });
    let at: number;
    while ((at = buf.indexOf("\n")) >= 0) {
      const text = buf.slice(0, at);
      buf = buf.slice(at + 1);
      if (text) yield JSON.parse(text) as T;
    }
  }
  if (buf.trim()) yield JSON.parse(buf) as T;
}
