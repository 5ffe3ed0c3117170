import { Int64 } from "@smithy/eventstream-codec";
import { describe, expect, it } from "vitest";
import { crc32, decodeFrame, EventStreamError, FrameReader, type EventMessage } from "../../src/usage/eventstream";
import { codec, concat } from "./event-frames-fixtures";

const enc = new TextEncoder();

const FRAMES = [
  codec.encode({ headers: { ":event-type": { type: "string", value: "chunk" }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } }, body: enc.encode('{"bytes":"eyJ0eXBlIjoicGluZyJ9"}') }),
  codec.encode({
    headers: {
      yes: { type: "boolean", value: true }, no: { type: "boolean", value: false }, b: { type: "byte", value: -7 }, s: { type: "short", value: 1234 },
      i: { type: "integer", value: -123456 }, l: { type: "long", value: Int64.fromNumber(9_007_199_254) }, bin: { type: "binary", value: new Uint8Array([1, 2, 3]) },
      t: { type: "timestamp", value: new Date(1_764_320_400_000) }, u: { type: "uuid", value: "1f2e3d4c-5b6a-4798-8a9b-0c1d2e3f4a5b" }, "é": { type: "string", value: "ünïcode" },
    },
    body: new Uint8Array(0),
  }),
  codec.encode({ headers: {}, body: enc.encode("x".repeat(300)) }),
  codec.encode({ headers: { ":message-type": { type: "string", value: "exception" }, ":exception-type": { type: "string", value: "throttlingException" } }, body: enc.encode('{"message":"Too many tokens, please wait before trying again."}') }),
];

const ALL = concat(FRAMES);

/** Feeds `bytes` to a reader in `size`-byte chunks; the messages, and the most bytes it held between chunks. */
function read(bytes: Uint8Array, size: number): { messages: EventMessage[]; held: number; pending: number } {
  const r = new FrameReader();
  const messages: EventMessage[] = [];
  let held = 0;
  for (let at = 0; at < bytes.length; at += size) {
    messages.push(...r.push(bytes.slice(at, at + size)));
    held = Math.max(held, r.pending);
  }
  return { messages, held, pending: r.pending };
}

const plain = (m: EventMessage) => ({ headers: m.headers, payload: new TextDecoder().decode(m.payload) });
const fault = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof EventStreamError ? e.fault : `not an EventStreamError: ${String(e)}`;
  }
  return "no error";
};

describe("event-stream frames", () => {
  it("crc32 is zlib's", () => {
    expect(crc32(enc.encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
  });

  it("reads every header type the codec writes", () => {
    const m = decodeFrame(FRAMES[1]!);
    expect(m.headers).toEqual({
      yes: true, no: false, b: -7, s: 1234, i: -123456, l: 9_007_199_254, bin: new Uint8Array([1, 2, 3]), t: 1_764_320_400_000,
      u: "1f2e3d4c5b6a47988a9b0c1d2e3f4a5b", "é": "ünïcode",
    });
    expect(m.payload.length).toBe(0);
  });

  it("reads the same messages at every chunk size, holding at most one frame", () => {
    const whole = read(ALL, ALL.length).messages.map(plain);
    expect(whole).toHaveLength(4);
    expect(whole[0]!.headers[":event-type"]).toBe("chunk");
    expect(whole[3]!.payload).toContain("Too many tokens");
    const biggest = Math.max(...FRAMES.map((f) => f.length));
    for (let size = 1; size <= ALL.length; size++) {
      const r = read(ALL, size);
      expect(r.messages.map(plain)).toEqual(whole);
      expect(r.pending).toBe(0);
      expect(r.held).toBeLessThan(biggest);
    }
  });

  it("holds a partial frame until its end, then gives it", () => {
    const r = new FrameReader();
    const f = FRAMES[2]!;
    expect(r.push(f.subarray(0, 5))).toEqual([]);
    expect(r.pending).toBe(5);
    expect(r.push(f.subarray(5, f.length - 1))).toEqual([]);
    expect(r.pending).toBe(f.length - 1);
    expect(r.push(f.subarray(f.length - 1)).map(plain)).toEqual([plain(decodeFrame(f))]);
    expect(r.pending).toBe(0);
    // A frame whole in one chunk is read where it lies: its payload is a view of that chunk.
    const [m] = new FrameReader().push(f);
    expect(m!.payload.buffer).toBe(f.buffer);
  });

  it("rejects a prelude or a message whose CRC does not match, at any chunk size", () => {
    const flip = (at: number) => {
      const b = ALL.slice();
      b[at] = b[at]! ^ 0x01;
      return b;
    };
    const second = FRAMES[0]!.length;
    const cases: [Uint8Array, string][] = [
      [flip(9), "prelude_crc"], // the prelude's own CRC
      [flip(2), "prelude_crc"], // the total length, covered by it
      [flip(20), "message_crc"], // a header byte
      [flip(FRAMES[0]!.length - 2), "message_crc"], // the message CRC itself
      [flip(second + 40), "message_crc"], // a later frame
    ];
    for (const [bytes, want] of cases) {
      for (const size of [1, 3, 12, 13, 64, bytes.length]) {
        expect(fault(() => read(bytes, size))).toBe(want);
      }
    }
  });

  it("rejects lengths out of bounds and headers that run past their frame, even with good CRCs", () => {
    const frame = (total: number, headersLen: number, rest: number[]) => {
      const b = new Uint8Array(12 + rest.length + 4);
      const v = new DataView(b.buffer);
      v.setUint32(0, total);
      v.setUint32(4, headersLen);
      v.setUint32(8, crc32(b.subarray(0, 8)));
      b.set(rest, 12);
      v.setUint32(b.length - 4, crc32(b.subarray(0, b.length - 4)));
      return b;
    };
    expect(fault(() => new FrameReader().push(frame(8, 0, [])))).toBe("length");
    expect(fault(() => new FrameReader().push(frame(17 * 1024 * 1024, 0, [])))).toBe("length");
    expect(fault(() => new FrameReader().push(frame(16, 4, [])))).toBe("length");
    // A header named "abcde" (5 bytes) of which only 3 are there.
    expect(fault(() => new FrameReader().push(frame(20, 4, [5, 97, 98, 99])))).toBe("headers");
    // An unknown header type.
    expect(fault(() => new FrameReader().push(frame(19, 3, [1, 97, 42])))).toBe("headers");
  });
});
