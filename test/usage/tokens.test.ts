import { describe, expect, it } from "vitest";
import { merge, tokensOf, usageIn } from "../../src/usage/tokens";
import { anthropicMessage, geminiAnswer, openaiChat } from "./fixtures";

describe("usage of a plain answer", () => {
  it("OpenAI chat: prompt, completion and cached tokens", () => {
    expect(usageIn(openaiChat)).toEqual({ input: 1117, output: 46, cached: 1024, cacheWrite: 0 });
  });

  it("Anthropic: input adds the cache's reads and writes, which are reported apart", () => {
    expect(usageIn(anthropicMessage)).toEqual({ input: 2095 + 2051, output: 503, cached: 0, cacheWrite: 2051 });
    expect(tokensOf({ input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 5 })).toEqual({ input: 100, output: 5, cached: 90, cacheWrite: 0 });
  });

  it("Gemini usageMetadata: thinking tokens are output, cached content is cached", () => {
    expect(usageIn(geminiAnswer)).toEqual({ input: 12, output: 80, cached: 4, cacheWrite: 0 });
  });

  it("OpenAI Responses and embeddings shapes", () => {
    expect(tokensOf({ input_tokens: 36, input_tokens_details: { cached_tokens: 8 }, output_tokens: 87 })).toEqual({ input: 36, output: 87, cached: 8, cacheWrite: 0 });
    expect(usageIn({ object: "list", data: [], usage: { prompt_tokens: 8, total_tokens: 8 } })).toEqual({ input: 8, output: 0, cached: 0, cacheWrite: 0 });
  });

  it("DeepSeek's top-level cache hits", () => {
    expect(tokensOf({ prompt_tokens: 100, completion_tokens: 3, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 })).toMatchObject({ input: 100, cached: 64 });
  });

  it("no usage is null, never zeros", () => {
    for (const v of [null, "x", 3, [], {}, { usage: null }, { usage: {} }, { usage: { total_tokens: 9 } }, { choices: [] }]) expect(usageIn(v)).toBeNull();
  });

  it("garbage numbers count as 0, not NaN", () => {
    expect(tokensOf({ prompt_tokens: -3, completion_tokens: "7" as unknown as number })).toEqual({ input: 0, output: 0, cached: 0, cacheWrite: 0 });
  });

  it("merge keeps the largest reading of each field", () => {
    const start = { input: 125, output: 1, cached: 100, cacheWrite: 0 };
    expect(merge(start, { input: 0, output: 15, cached: 0, cacheWrite: 0 })).toEqual({ input: 125, output: 15, cached: 100, cacheWrite: 0 });
    expect(merge(null, start)).toBe(start);
    expect(merge(start, null)).toBe(start);
  });
});
