/**
 * @module An incremental reader of `application/vnd.amazon.eventstream` frames, the binary framing
 * of Bedrock's streamed answers. Each frame: a 12-byte prelude (total length, headers length, and a
 * CRC32 of those 8 bytes), typed headers, a payload, and a CRC32 of everything before it (the
 * format as @smithy/eventstream-codec writes it; AWS's "Event stream encoding" in the Transcribe
 * and S3 Select references). Fed chunks of any size: a frame may span chunks and a chunk may hold
 * many frames; it holds at most one frame's bytes. Pure.
 */

export type HeaderValue = boolean | number | string | Uint8Array;

export interface EventMessage {
  headers: Record<string, HeaderValue>;
  payload: Uint8Array;
}

/** Why a stream cannot be read: a checksum that does not match, a length out of bounds, a header that runs past its frame. */
export type FrameFault = "prelude_crc" | "message_crc" | "length" | "headers";

export class EventStreamError extends Error {
  constructor(readonly fault: FrameFault) {
    super(`event stream: ${fault.replace("_", " ")}`);
  }
}

const PRELUDE = 12;
/** Prelude and message CRC: the smallest frame. */
const MIN_FRAME = PRELUDE + 4;
/** The codec's bounds (@smithy/eventstream-codec): 16 MiB a message, 128 KiB of headers. */
const MAX_FRAME = 16 * 1024 * 1024;
const MAX_HEADERS = 128 * 1024;

const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE 802.3, as zlib computes it). */
export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset + at, 4).getUint32(0);
const utf8 = new TextDecoder();

/** Checks a prelude; returns the frame's total length. */
function prelude(p: Uint8Array): number {
  if (crc32(p.subarray(0, 8)) !== u32(p, 8)) throw new EventStreamError("prelude_crc");
  const total = u32(p, 0);
  const headers = u32(p, 4);
  if (total < MIN_FRAME || total > MAX_FRAME || headers > MAX_HEADERS || headers > total - MIN_FRAME) throw new EventStreamError("length");
  return total;
}

/** The typed headers (type bytes 0 to 9: true, false, byte, short, int, long, bytes, string, timestamp, uuid). */
function headersOf(b: Uint8Array): Record<string, HeaderValue> {
  const out: Record<string, HeaderValue> = {};
  const view = new DataView(b.buffer, b.byteOffset, b.length);
  let at = 0;
  const need = (n: number) => {
    if (at + n > b.length) throw new EventStreamError("headers");
  };
  while (at < b.length) {
    const nameLen = b[at++]!;
    need(nameLen + 1);
    const name = utf8.decode(b.subarray(at, at + nameLen));
    at += nameLen;
    const type = b[at++]!;
    let value: HeaderValue;
    if (type === 0 || type === 1) value = type === 0;
    else if (type === 2) (need(1), (value = view.getInt8(at)), (at += 1));
    else if (type === 3) (need(2), (value = view.getInt16(at)), (at += 2));
    else if (type === 4) (need(4), (value = view.getInt32(at)), (at += 4));
    else if (type === 5 || type === 8) (need(8), (value = Number(view.getBigInt64(at))), (at += 8));
    else if (type === 6 || type === 7) {
      need(2);
      const len = view.getUint16(at);
      at += 2;
      need(len);
      value = type === 7 ? utf8.decode(b.subarray(at, at + len)) : b.slice(at, at + len);
      at += len;
    } else if (type === 9) {
      need(16);
      value = Array.from(b.subarray(at, at + 16), (x) => x.toString(16).padStart(2, "0")).join("");
      at += 16;
    } else throw new EventStreamError("headers");
    out[name] = value;
  }
  return out;
}

/** One whole frame, checked. Its payload is a view into `frame`. */
export function decodeFrame(frame: Uint8Array): EventMessage {
  const total = prelude(frame);
  if (frame.length !== total) throw new EventStreamError("length");
  if (crc32(frame.subarray(0, total - 4)) !== u32(frame, total - 4)) throw new EventStreamError("message_crc");
  const end = PRELUDE + u32(frame, 4);
  return { headers: headersOf(frame.subarray(PRELUDE, end)), payload: frame.subarray(end, total - 4) };
}

/** Reads frames out of chunks as they come. A bad frame throws EventStreamError; the reader is then spent. */
export class FrameReader {
  #pre = new Uint8Array(PRELUDE);
  #preLen = 0;
  #frame: Uint8Array | null = null;
  #have = 0;

  /** The frames `chunk` completes, in order. */
  push(chunk: Uint8Array): EventMessage[] {
    const out: EventMessage[] = [];
    let i = 0;
    while (i < chunk.length) {
      if (!this.#frame) {
        // A frame that starts and ends in this chunk is read where it lies, never copied.
        if (this.#preLen === 0 && chunk.length - i >= PRELUDE) {
          const total = prelude(chunk.subarray(i, i + PRELUDE));
          if (chunk.length - i >= total) {
            out.push(decodeFrame(chunk.subarray(i, i + total)));
            i += total;
            continue;
          }
          this.#start(total);
        } else {
          const take = Math.min(PRELUDE - this.#preLen, chunk.length - i);
          this.#pre.set(chunk.subarray(i, i + take), this.#preLen);
          this.#preLen += take;
          i += take;
          if (this.#preLen < PRELUDE) continue;
          this.#start(prelude(this.#pre));
          this.#frame!.set(this.#pre);
          this.#have = PRELUDE;
          this.#preLen = 0;
        }
      }
      const frame = this.#frame!;
      const take = Math.min(frame.length - this.#have, chunk.length - i);
      frame.set(chunk.subarray(i, i + take), this.#have);
      this.#have += take;
      i += take;
      if (this.#have === frame.length) {
        this.#frame = null;
        this.#have = 0;
        out.push(decodeFrame(frame));
      }
    }
    return out;
  }

  #start(total: number) {
    this.#frame = new Uint8Array(total);
    this.#have = 0;
  }

  /** Bytes held of a frame not yet whole: 0 when the stream so far ended on a frame's end. */
  get pending(): number {
    return this.#preLen + this.#have;
  }
}
