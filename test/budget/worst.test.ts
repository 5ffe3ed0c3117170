// The most a request can cost (issue 39): its output limit, else its model's maximum, times its
// answers; its body, else its model's whole context where it names what only the provider sees.
import { describe, expect, it } from "vitest";
import { namesRemote, outputField, outputThatFits, worstCase } from "../../src/budget/worst";
import { costOf, priceOf, priceTable } from "../../src/usage/prices";

const table = priceTable(undefined);
const gpt5 = priceOf(table, "openai", "gpt-5")!;
const bound = (json: unknown, bytes: number, price = gpt5, model = "gpt-5") => {
  const w = worstCase(json, bytes, price, model);
  if ("why" in w) throw new Error(w.why);
  return w.bound;
};

describe("worstCase", () => {
  it("a body with no output limit is bounded by its model's maximum output, not 256 tokens: $0.50 no longer admits 185 of them", () => {
    const body = { model: "gpt-5", messages: [{ role: "user", content: "x".repeat(340) }] };
    const b = bound(body, 400);
    expect(b).toMatchObject({ input: 400, perAnswer: 128_000, answers: 1, output: 128_000 });
    expect(b.usd).toBeCloseTo((400 * 1.25 + 128_000 * 10) / 1e6, 12);
    expect(b.usd).toBeGreaterThan(0.5);
  });

  it("an output limit bounds it (never past the model's maximum), every spelling, times the answers asked for", () => {
    expect(bound({ max_completion_tokens: 1_000 }, 100)).toMatchObject({ perAnswer: 1_000, output: 1_000 });
    expect(bound({ max_tokens: 10_000_000 }, 100)).toMatchObject({ perAnswer: 128_000 });
    expect(bound({ max_completion_tokens: 1_000, n: 4 }, 100)).toMatchObject({ perAnswer: 1_000, answers: 4, output: 4_000 });
    const flash = priceOf(table, "gemini", "gemini-2.5-flash")!;
    expect(bound({ generation_config: { max_output_tokens: 500, candidate_count: 2 } }, 100, flash, "gemini-2.5-flash")).toMatchObject({ output: 1_000 });
    expect(bound({ generationConfig: { candidateCount: 3 } }, 100, flash, "gemini-2.5-flash")).toMatchObject({ perAnswer: 65_536, output: 3 * 65_536 });
  });

  it("input is the body's bytes (a token is at least a byte), never past the model's context", () => {
    expect(bound({ max_tokens: 1 }, 12_345).input).toBe(12_345);
    expect(bound({ max_tokens: 1 }, 10_000_000).input).toBe(400_000);
  });

  it("what a body names by reference is billed as input of a size only the provider knows: the whole context", () => {
    for (const body of [
      { previous_response_id: "resp_1", input: "go on", max_output_tokens: 10 },
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }], max_output_tokens: 10 },
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }] }], max_tokens: 10 },
      { input: [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/a.pdf" }] }], max_output_tokens: 10 },
      { messages: [{ role: "user", content: [{ type: "document", source: { type: "url", url: "https://example.com/a.pdf" } }] }], max_tokens: 10 },
      { tools: [{ type: "web_fetch_20250910", name: "web_fetch" }], max_tokens: 10 },
    ])
      expect(bound(body, 200).input, JSON.stringify(body)).toBe(400_000);
    const pro = priceOf(table, "gemini", "gemini-2.5-pro")!;
    const video = { contents: [{ parts: [{ fileData: { fileUri: "https://www.youtube.com/watch?v=x" } }, { text: "sum up" }] }], generationConfig: { maxOutputTokens: 100 } };
    const b = bound(video, 150, pro, "gemini-2.5-pro");
    // A tiny body with a long video: priced in the long-context band, not below it forever.
    expect(b.input).toBe(1_048_576);
    expect(b.usd).toBeCloseTo(costOf({ input: 1_048_576, output: 100, cached: 0, cacheWrite: 0 }, pro), 12);
    expect(b.usd).toBeCloseTo((1_048_576 * 2.5 + 100 * 15) / 1e6, 12);
    expect(bound({ contents: [{ parts: [{ text: "hi" }] }], tools: [{ urlContext: {} }], generationConfig: { maxOutputTokens: 1 } }, 100, pro, "gemini-2.5-pro").input).toBe(1_048_576);
    // An inline image (data:) is in the body's bytes already.
    expect(namesRemote({ messages: [{ content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }] })).toBeNull();
  });

  it("what it cannot bound says why and how: no output limit and no maximum, or a reference and no context", () => {
    const custom = { input: 1, output: 2 };
    const noLimit = worstCase({ messages: [] }, 10, custom, "house-model");
    expect("why" in noLimit && noLimit.why).toMatch(/names no output limit and model "house-model" has no maxOutput in PRICES: set one \(max_tokens/);
    expect(worstCase({ max_tokens: 5 }, 10, custom, "house-model")).toMatchObject({ bound: { input: 10, output: 5 } });
    // Bedrock Converse's limit bounds it (before: the model's maxOutput, or no bound at all).
    expect(worstCase({ messages: [], inferenceConfig: { maxTokens: 7 } }, 10, custom, "house-model")).toMatchObject({ bound: { input: 10, output: 7 } });
    const ref = worstCase({ previous_response_id: "resp_9", max_tokens: 5 }, 10, custom, "house-model");
    expect("why" in ref && ref.why).toMatch(/names a stored response \(resp_9\).*no context in PRICES/);
  });

  it("says how large an output limit would fit the room left, and the route's own field for it", () => {
    const b = bound({ messages: [] }, 400);
    // $0.50 left: the prompt's $0.0005, the rest at $10 a million output tokens.
    expect(outputThatFits(b, gpt5, 0.5)).toBe(Math.floor((0.5 * 1e6 - 400 * 1.25) / 10));
    expect(outputThatFits(bound({ n: 2 }, 400), gpt5, 0.5)).toBe(Math.floor((0.5 * 1e6 - 400 * 1.25) / 10 / 2));
    expect(outputThatFits(b, gpt5, 0.0001)).toBe(0);
    expect(outputField("/v1/chat/completions")).toBe("max_completion_tokens");
    expect(outputField("/v1/responses")).toBe("max_output_tokens");
    expect(outputField("/v1/messages")).toBe("max_tokens");
    expect(outputField("/v1beta/models/gemini-2.5-pro:streamGenerateContent")).toBe("generationConfig.maxOutputTokens");
    expect(outputField("/us-east-1/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse")).toBe("inferenceConfig.maxTokens");
    expect(outputField("/us-east-1/model/meta.llama3-3-70b-instruct-v1:0/converse-stream")).toBe("inferenceConfig.maxTokens");
    expect(outputField("/us-east-1/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke")).toBe("max_tokens");
  });
});
