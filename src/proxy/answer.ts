import { callerHeaders, concat } from "./forward";
import { renamedQuota } from "./quota-headers";

/**
 * A plain (not event-stream) answer up to this size is read whole before it goes back: its slot
 * and its settle then go in one call, with a reading as fresh as the headers'. Larger ones stream.
 */
export const BUFFER_MAX = 1024 * 1024;

export const isEventStream = (h: Headers) => h.get("content-type")?.includes("text/event-stream") ?? false;

/** How much of an error body is kept (to classify it and hand it back); the rest is dropped unread. */
export const ERROR_BODY_MAX = 64 * 1024;

/**
 * An answer passed through as it comes rather than read whole first: one the caller asked to
 * stream (Gemini's `streamGenerateContent` is JSON, not SSE), SSE, newline-delimited JSON, or the
 * binary frames its provider's row streams in (`framed`: their content type).
 */
export function isStreamed(h: Headers, asked: boolean | undefined, framed?: string): boolean {
  const type = h.get("content-type") ?? "";
  return asked === true || isEventStream(h) || /ndjson|jsonl|json-seq/i.test(type) || (framed !== undefined && type.includes(framed));
}

/** At most `max` bytes of `body`; the rest is cancelled, never buffered. */
export async function readCapped(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < max) {
    const { done, value } = await reader.read();
    if (done) return concat(chunks, size);
    const part = value.byteLength > max - size ? value.subarray(0, max - size) : value;
    chunks.push(part);
    size += part.byteLength;
  }
  await reader.cancel().catch(() => {});
  return concat(chunks, size);
}

/** How a success goes back: the provider's status and headers, its quota headers renamed (quota-headers.ts), in one pass. */
export const answerInit = (res: Response): ResponseInit => ({ status: res.status, statusText: res.statusText, headers: callerHeaders(res.headers, renamedQuota) });

/** Blank lines and spaces: what a provider holding a plain answer open sends meanwhile (DeepSeek, under load). */
const isBlank = (chunks: Uint8Array[]) => chunks.every((c) => c.every((b) => b === 0x0a || b === 0x0d || b === 0x20 || b === 0x09));

/** A stream that gives `chunks` and then the rest of `reader` as it comes. */
function replay(chunks: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
    },
    async pull(c) {
      const { done, value } = await reader.read();
      if (done) c.close();
      else c.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * Reads `body` whole if it ends within `max` bytes. Otherwise returns a stream that gives what was
 * read and then the rest as it comes, so nothing is lost and nothing large is held: `rest` past
 * `max`, `held` as soon as all that came is blank lines (a provider holding the answer open while
 * it works: the caller must see it come, not wait minutes for its headers).
 */
export async function readUpTo(
  body: ReadableStream<Uint8Array>,
  max: number,
  watch?: (reader: ReadableStreamDefaultReader<Uint8Array>) => { touch: () => void; done: () => void },
): Promise<{ whole: Uint8Array } | { rest: ReadableStream<Uint8Array> } | { held: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const idle = watch?.(reader);
  try {
    return await readFrom(reader, max, idle?.touch);
  } finally {
    idle?.done();
  }
}

async function readFrom(reader: ReadableStreamDefaultReader<Uint8Array>, max: number, touch?: () => void): Promise<{ whole: Uint8Array } | { rest: ReadableStream<Uint8Array> } | { held: ReadableStream<Uint8Array> }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size <= max) {
    const { done, value } = await reader.read();
    if (done) return { whole: concat(chunks, size) };
    touch?.();
    chunks.push(value);
    size += value.byteLength;
    if (value.byteLength > 0 && isBlank(chunks)) return { held: replay(chunks, reader) };
  }
  return { rest: replay(chunks, reader) };
}

/** Why a stream was cut: its caller read nothing of it for STREAM_IDLE_MS. */
export class CallerStalled extends Error {}

/**
 * Streams a body chunk by chunk; `done` runs once, when it ends or the caller leaves. With
 * `idleMs`, a caller that takes nothing for that long while a chunk waits for it has stopped
 * reading: its stream is cut with an error and the provider's body cancelled, so its slots go back
 * rather than staying held (and renewed) for as long as the provider keeps the stream open.
 */
export function streamBack(body: ReadableStream<Uint8Array> | null, init: ResponseInit, waitUntil: (p: Promise<unknown>) => void, done: () => void, idleMs?: number): Response {
  if (!body) {
    done();
    return new Response(null, init);
  }
  const reader = body.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let over = false;
  let finished!: () => void;
  waitUntil(new Promise<void>((r) => (finished = r)));
  const end = () => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    done();
    finished();
  };
  const out = new ReadableStream<Uint8Array>({
    async pull(c) {
      clearTimeout(timer);
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        end();
        return c.error(err);
      }
      if (chunk.done) {
        end();
        return c.close();
      }
      c.enqueue(chunk.value);
      // The chunk waits for the caller: the idle limit runs until it asks for the next one.
      if (idleMs)
        timer = setTimeout(() => {
          const why = new CallerStalled("the caller read nothing of the answer for STREAM_IDLE_MS");
          reader.cancel(why).catch(() => {});
          c.error(why);
          end();
        }, idleMs);
    },
    cancel(reason) {
      reader.cancel(reason).catch(() => {});
      end();
    },
  });
  return new Response(out, init);
}
