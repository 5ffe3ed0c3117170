// Bedrock's streams as it sends them, framed by an independent implementation (the AWS SDK's own
// event-stream codec), for the reader's and the usage tap's tests. Shapes: the Bedrock API
// reference (API_runtime_ResponseStream, API_runtime_ConverseStreamOutput, PayloadPart) and
// Anthropic's Messages stream; the `p` padding field as observed in real chunks (third party).
import { EventStreamCodec } from "@smithy/eventstream-codec";

export { chunked } from "./fixtures";

export const codec = new EventStreamCodec((b) => new TextDecoder().decode(b), (s) => new TextEncoder().encode(s));
const enc = new TextEncoder();

export const concat = (parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
};

const str = (value: string) => ({ type: "string" as const, value });

/** One event frame: `:event-type`, JSON content, `:message-type` event. */
export const eventFrame = (type: string, payload: object) =>
  codec.encode({ headers: { ":event-type": str(type), ":content-type": str("application/json"), ":message-type": str("event") }, body: enc.encode(JSON.stringify(payload)) });

/** An exception frame, as a stream that fails after it started ends. */
export const exceptionFrame = (type: string, message: string) =>
  codec.encode({ headers: { ":exception-type": str(type), ":content-type": str("application/json"), ":message-type": str("exception") }, body: enc.encode(JSON.stringify({ message })) });

const PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0";
const b64 = (o: object) => btoa(String.fromCharCode(...enc.encode(JSON.stringify(o))));
const chunk = (o: object, i: number) => eventFrame("chunk", { bytes: b64(o), p: PAD.slice(0, 1 + (i * 7) % PAD.length) });

/**
 * InvokeModelWithResponseStream of a Claude model: Anthropic's events, base64 in `chunk` events,
 * the last with `amazon-bedrock-invocationMetrics`. 25 input tokens uncached, 100 read from the
 * cache and 20 written to it, 12 output.
 */
export function invokeStream(): Uint8Array {
  const usage = { input_tokens: 25, cache_creation_input_tokens: 20, cache_read_input_tokens: 100, output_tokens: 1 };
  const events: object[] = [
    { type: "message_start", message: { id: "msg_bdrk_01", type: "message", role: "assistant", model: "claude-haiku-4-5-20251001", content: [], stop_reason: null, usage } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...["The stand-in", " answers", " with a few", " words"].map((text) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } },
    {
      type: "message_stop",
      "amazon-bedrock-invocationMetrics": { inputTokenCount: 25, outputTokenCount: 12, invocationLatency: 812, firstByteLatency: 301, cacheReadInputTokenCount: 100, cacheWriteInputTokenCount: 20 },
    },
  ];
  return concat(events.map(chunk));
}

/** ConverseStream: its own events, usage in `metadata` (30 input, 7 output). */
export function converseStream(): Uint8Array {
  return concat([
    eventFrame("messageStart", { role: "assistant", p: PAD.slice(0, 4) }),
    ...["Hello", " from", " Converse"].map((text) => eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text }, p: PAD.slice(0, 9) })),
    eventFrame("contentBlockStop", { contentBlockIndex: 0, p: PAD.slice(0, 2) }),
    eventFrame("messageStop", { stopReason: "end_turn", p: PAD }),
    eventFrame("metadata", { usage: { inputTokens: 30, outputTokens: 7, totalTokens: 37 }, metrics: { latencyMs: 412 }, p: PAD.slice(0, 20) }),
  ]);
}
