import { describe, expect, it } from "vitest";
import { DIALECTS } from "../../src/providers/dialects";
import { converseTokens, tapEventStream } from "../../src/usage/event-frames";
import { headerUsage } from "../../src/usage/header-usage";
import { usageIn } from "../../src/usage/tokens";
import { chunked, concat, converseStream, eventFrame, exceptionFrame, invokeStream } from "./event-frames-fixtures";

/** Bedrock's row: where its streams' frames and a plain answer's usage headers are named. */
const USAGE = DIALECTS.bedrock.usage;
const FRAMES = USAGE.frames!;

async function drain(bytes: Uint8Array, size: number) {
  const seen: unknown[] = [];
  const tap = tapEventStream(chunked(bytes, size), FRAMES, (j) => seen.push(j));
  const out = new Uint8Array(await new Response(tap.body).arrayBuffer());
  return { out, tap, seen };
}

const SIZES = [1, 2, 5, 11, 12, 13, 64, 333, 1 << 20];

describe("Bedrock stream usage, read as the frames pass", () => {
  for (const size of SIZES) {
    it(`InvokeModelWithResponseStream (Claude), ${size}-byte chunks: usage and invocation metrics read, bytes passed unchanged`, async () => {
      const bytes = invokeStream();
      const { out, tap, seen } = await drain(bytes, size);
      expect(out).toEqual(bytes);
      expect(tap.tokens()).toEqual({ input: 145, output: 12, cached: 100, cacheWrite: 20 });
      expect(tap.whole()).toBe(true);
      expect(tap.exception()).toBeNull();
      expect(seen.map((j) => (j as { type: string }).type)).toContain("message_delta");
    });

    it(`ConverseStream, ${size}-byte chunks: the metadata event's usage`, async () => {
      const bytes = converseStream();
      const { out, tap } = await drain(bytes, size);
      expect(out).toEqual(bytes);
      expect(tap.tokens()).toEqual({ input: 30, output: 7, cached: 0, cacheWrite: 0 });
      expect(tap.fault()).toBeNull();
    });
  }

  it("invocation metrics alone (a model whose own events carry no usage) are enough", async () => {
    const b64 = (o: object) => btoa(JSON.stringify(o));
    const bytes = concat([
      eventFrame("chunk", { bytes: b64({ generation: "Hi", prompt_token_count: null, stop_reason: null }) }),
      eventFrame("chunk", { bytes: b64({ generation: "", stop_reason: "stop", "amazon-bedrock-invocationMetrics": { inputTokenCount: 9, outputTokenCount: 3 } }) }),
    ]);
    const { tap } = await drain(bytes, 7);
    expect(tap.tokens()).toEqual({ input: 9, output: 3, cached: 0, cacheWrite: 0 });
  });

  it("an exception event is recognised, with the usage seen before it", async () => {
    for (const type of ["throttlingException", "modelStreamErrorException"]) {
      const bytes = concat([converseStream().slice(0, 0), eventFrame("messageStart", { role: "assistant" }), exceptionFrame(type, "Too many tokens, please wait before trying again.")]);
      const { tap } = await drain(bytes, 3);
      expect(tap.exception()).toEqual({ type, message: "Too many tokens, please wait before trying again." });
      expect(tap.tokens()).toBeNull();
    }
  });

  it("a frame that fails its CRC stops the reading, never the stream", async () => {
    const bytes = invokeStream();
    const bad = bytes.slice();
    const last = bad.length - 2; // inside the last frame's message CRC: the metrics frame is unread
    bad[last] = bad[last]! ^ 0xff;
    const { out, tap } = await drain(bad, 16);
    expect(out).toEqual(bad);
    expect(tap.fault()).toBe("message_crc");
    expect(tap.whole()).toBe(false);
    // What came before the bad frame was read.
    expect(tap.tokens()).toEqual({ input: 145, output: 12, cached: 100, cacheWrite: 20 });
  });

  it("a stream cut inside a frame is not whole", async () => {
    const bytes = converseStream();
    const { tap } = await drain(bytes.slice(0, bytes.length - 5), 10);
    expect(tap.fault()).toBe("length");
    expect(tap.whole()).toBe(false);
    expect(tap.tokens()).toBeNull();
  });
});

describe("Bedrock plain answers, as the meter reads them from the row (the body's usage, else its headers)", () => {
  const h = (o: Record<string, string>) => new Headers(o);
  const plainTokens = (body: unknown, headers: Headers) => usageIn(body, USAGE.at) ?? headerUsage(headers, USAGE.headers!);
  const headerTokens = (headers: Headers) => headerUsage(headers, USAGE.headers!);

  it("InvokeModel (Claude): the body's usage, the headers agreeing", () => {
    const body = { id: "msg_bdrk_1", type: "message", content: [{ type: "text", text: "hi" }], usage: { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
    expect(plainTokens(body, h({ "X-Amzn-Bedrock-Input-Token-Count": "12", "X-Amzn-Bedrock-Output-Token-Count": "5" }))).toEqual({ input: 12, output: 5, cached: 0, cacheWrite: 0 });
  });

  it("InvokeModel of a model whose body has no usage: the headers (cache headers too)", () => {
    const body = { generation: "hi", prompt_token_count: 10, generation_token_count: 2, stop_reason: "stop" };
    expect(plainTokens(body, h({ "x-amzn-bedrock-input-token-count": "10", "x-amzn-bedrock-output-token-count": "2" }))).toEqual({ input: 10, output: 2, cached: 0, cacheWrite: 0 });
    expect(headerTokens(h({ "x-amzn-bedrock-input-token-count": "4", "x-amzn-bedrock-output-token-count": "2", "x-amzn-bedrock-cache-read-input-token-count": "50", "x-amzn-bedrock-cache-write-input-token-count": "6" }))).toEqual({
      input: 60, output: 2, cached: 50, cacheWrite: 6,
    });
    expect(headerTokens(h({ "x-amzn-bedrock-input-token-count": "lots" }))).toBeNull();
  });

  it("Converse: `usage` with the cache's reads and writes added to input", () => {
    const body = { output: { message: { role: "assistant", content: [{ text: "hi" }] } }, stopReason: "end_turn", usage: { inputTokens: 8, outputTokens: 3, totalTokens: 111, cacheReadInputTokens: 90, cacheWriteInputTokens: 10 }, metrics: { latencyMs: 300 } };
    expect(plainTokens(body, h({}))).toEqual({ input: 108, output: 3, cached: 90, cacheWrite: 10 });
    expect(converseTokens({ totalTokens: 3 })).toBeNull();
    expect(plainTokens({ message: "Too many requests, please wait before trying again." }, h({}))).toBeNull();
  });
});
