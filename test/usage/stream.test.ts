import { describe, expect, it } from "vitest";
import { lastUsage, tapStream } from "../../src/usage/stream";
import { anthropicStream, chunked, geminiArray, geminiSse, openaiStream, responsesStream } from "./fixtures";

async function drain(text: string, size: number, sse: boolean, strip: boolean) {
  const tap = tapStream(chunked(text, size), sse, strip);
  const out = await new Response(tap.body).text();
  return { out, tokens: tap.tokens() };
}

describe("usage of a streamed answer", () => {
  for (const size of [1, 7, 64, 1 << 20]) {
    it(`OpenAI with include_usage, in ${size}-byte chunks: read, and passed through unchanged`, async () => {
      const text = openaiStream(true);
      const { out, tokens } = await drain(text, size, true, false);
      expect(out).toBe(text);
      expect(tokens).toEqual({ input: 19, output: 10, cached: 0, cacheWrite: 0 });
    });

    it(`OpenAI, the gateway asked (${size}-byte chunks): the usage chunk is stripped, the rest is byte for byte`, async () => {
      const { out, tokens } = await drain(openaiStream(true), size, true, true);
      expect(tokens).toEqual({ input: 19, output: 10, cached: 0, cacheWrite: 0 });
      expect(out).not.toContain('"prompt_tokens"');
      const kept = openaiStream(true).split("\n\n").filter((e) => !e.includes('"prompt_tokens"')).join("\n\n");
      expect(out).toBe(kept);
      expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
    });

    it(`Anthropic message_start + message_delta (${size}-byte chunks)`, async () => {
      const { out, tokens } = await drain(anthropicStream, size, true, false);
      expect(out).toBe(anthropicStream);
      expect(tokens).toEqual({ input: 125, output: 15, cached: 100, cacheWrite: 0 });
    });

    it(`Gemini SSE with CRLF and a JSON array (${size}-byte chunks)`, async () => {
      expect((await drain(geminiSse, size, true, false)).tokens).toEqual({ input: 8, output: 7, cached: 0, cacheWrite: 0 });
      const arr = await drain(geminiArray, size, false, false);
      expect(arr.out).toBe(geminiArray);
      expect(arr.tokens).toEqual({ input: 8, output: 7, cached: 0, cacheWrite: 0 });
    });
  }

  it("OpenAI Responses: response.completed", async () => {
    expect((await drain(responsesStream, 5, true, false)).tokens).toEqual({ input: 36, output: 87, cached: 8, cacheWrite: 0 });
  });

  it("a stream without usage reads as null; stripping leaves it whole", async () => {
    const text = openaiStream(false);
    const { out, tokens } = await drain(text, 9, true, true);
    expect(tokens).toBeNull();
    expect(out).toBe(text);
  });

  it("a stream that ends inside an event passes that event on", async () => {
    const text = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[{"delta":{"content":"b"}}]}';
    expect((await drain(text, 4, true, true)).out).toBe(text);
  });

  it("a caller who leaves early: what was seen so far", async () => {
    const tap = tapStream(chunked(anthropicStream, 64), true, false);
    const reader = tap.body.getReader();
    for (let i = 0; i < 8; i++) await reader.read();
    await reader.cancel();
    expect(tap.tokens()).toMatchObject({ input: 125, output: 1 });
  });

  it("lastUsage finds the last balanced object, braces inside strings included", () => {
    expect(lastUsage('{"usage":{"prompt_tokens":1,"completion_tokens":2}}')).toMatchObject({ input: 1, output: 2 });
    expect(lastUsage('[{"text":"} {","usageMetadata":{"promptTokenCount":3,"note":"}\\"}","candidatesTokenCount":4}}]')).toMatchObject({ input: 3, output: 4 });
    expect(lastUsage('{"usage":{"prompt_tokens":1')).toBeNull();
    expect(lastUsage("no usage here")).toBeNull();
  });
});
