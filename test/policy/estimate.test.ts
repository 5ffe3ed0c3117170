import { describe, expect, it } from "vitest";
import { choicesOf, costFor, DEFAULT_COST, DEFAULT_OUTPUT_TOKENS, estimate, estimateFor, estimateTokens, outputLimit } from "../../src/policy/estimate";
import { DIALECTS } from "../../src/providers/dialects";

describe("estimateTokens", () => {
  it("charges a token per 4 body bytes plus the output limit the request names", () => {
    expect(estimateTokens({ max_tokens: 100 }, 400)).toBe(200);
    expect(estimateTokens({ max_completion_tokens: 50 }, 4)).toBe(51);
    expect(estimateTokens({ max_output_tokens: 10 }, 8)).toBe(12);
    expect(estimateTokens({ generationConfig: { maxOutputTokens: 7 } }, 0)).toBe(7);
  });

  it("assumes a default output when none is named, and ignores nonsense limits", () => {
    expect(estimateTokens({}, 40)).toBe(10 + DEFAULT_OUTPUT_TOKENS);
    expect(estimateTokens({ max_tokens: -5 }, 0)).toBe(DEFAULT_OUTPUT_TOKENS);
    expect(estimateTokens({ max_tokens: "9" }, 0)).toBe(DEFAULT_OUTPUT_TOKENS);
    expect(estimateTokens({ max_tokens: 1e12 }, 0)).toBe(1_000_000);
  });

  it("charges the output limit once for every answer asked for (OpenAI's n and best_of, Gemini's candidateCount), as OpenAI's TPM counts it", () => {
    // Before: one answer's allowance whatever n asked, 200 here where OpenAI counts 100 + 10 x 100.
    expect(estimateTokens({ max_tokens: 100, n: 10 }, 400)).toBe(100 + 1_000);
    expect(estimate({ max_completion_tokens: 50, n: 4 }, 0).out).toBe(200);
    expect(estimateTokens({ n: 3 }, 0)).toBe(3 * DEFAULT_OUTPUT_TOKENS);
    expect(estimateTokens({ max_tokens: 10, n: 2, best_of: 5 }, 0)).toBe(50);
    expect(estimateTokens({ generationConfig: { maxOutputTokens: 7, candidateCount: 3 } }, 0)).toBe(21);
    expect(estimateTokens({ max_tokens: 100_000, n: 128 }, 0)).toBe(1_000_000);
    // Split apart where a row counts generated tokens apart: the output window is charged every answer's allowance.
    expect(costFor(DIALECTS.fireworks, estimate({ max_tokens: 16, n: 3 }, 48).cost, estimate({ max_tokens: 16, n: 3 }, 48).out)).toEqual({ cost: 12, out: 48 });
  });

  it("charges an embedding its input alone: it generates nothing (before: 256 of output assumed)", () => {
    expect(estimate({ model: "text-embedding-3-small", input: "a sentence to embed" }, 60, undefined, false)).toEqual({ cost: 15, out: 0 });
    expect(estimate({ model: "text-embedding-3-small", input: "a sentence to embed" }, 60)).toEqual({ cost: 15 + DEFAULT_OUTPUT_TOKENS, out: DEFAULT_OUTPUT_TOKENS });
    expect(estimate(null, 5_000, undefined, false)).toEqual({ cost: DEFAULT_COST, out: 0 });
  });

  it("estimateFor: an embedding's route (each family's) asks no output; the row's count of an image", () => {
    for (const route of ["/v1/embeddings", "/openai/deployments/d/embeddings", "/v1beta/models/gemini-embedding-001:embedContent", "/v1beta/models/gemini-embedding-001:batchEmbedContents"])
      expect(estimateFor(DIALECTS.gemini, route, { input: "x" }, 40), route).toEqual({ cost: 10, out: 0 });
    expect(estimateFor(DIALECTS.openai, "/v1/chat/completions", { max_tokens: 5 }, 40)).toEqual({ cost: 15, out: 5 });
    const picture = { max_tokens: 0, messages: [{ content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] };
    expect(estimateFor(DIALECTS.openai, "/v1/chat/completions", picture, 40).cost - estimateFor(DIALECTS.anthropic, "/v1/messages", picture, 40).cost).toBe(800 - 1_600);
  });

  it("charges a flat guess for a body that is not JSON, and 1 for an empty one", () => {
    expect(estimateTokens(null, 5_000)).toBe(DEFAULT_COST);
    expect(estimateTokens(null, 0)).toBe(1);
  });
});

const estimateOutput = (body: unknown, bytes: number) => estimate(body, bytes).out;
/** A body's charges at a key of row `d`, as the batch runner reads them (cli/direct.ts). */
const costOf = (d: Parameters<typeof costFor>[0], body: unknown, bytes: number) => costFor(d, estimate(body, bytes).cost, estimate(body, bytes).out);

describe("estimate's output allowance: what a window of generated tokens alone is charged", () => {
  it("is the output part of the estimate: the limit named, else the default, never the prompt", () => {
    expect(estimateOutput({ max_tokens: 16 }, 4_000)).toBe(16);
    expect(estimateTokens({ max_tokens: 16 }, 4_000) - estimateOutput({ max_tokens: 16 }, 4_000)).toBe(1_000);
    expect(estimateOutput({}, 40)).toBe(DEFAULT_OUTPUT_TOKENS);
    expect(estimateOutput({ max_tokens: 1e12 }, 0)).toBe(1_000_000);
    // A body nobody can read asks the default; an empty one nothing.
    expect(estimateOutput(null, 5_000)).toBe(DEFAULT_OUTPUT_TOKENS);
    expect(estimateOutput(null, 0)).toBe(0);
  });

  it("costOf: the whole estimate for a row that counts tokens together; the prompt's and the output's apart for one that counts generated tokens apart", () => {
    const body = { max_tokens: 16 };
    expect(costOf(DIALECTS.openai, body, 48)).toEqual({ cost: 28 });
    expect(costOf(DIALECTS.groq, body, 48)).toEqual({ cost: 28 });
    expect(costOf(DIALECTS.fireworks, body, 48)).toEqual({ cost: 12, out: 16 });
    expect(costOf(DIALECTS.anthropic, body, 48)).toEqual({ cost: 12, out: 16 });
    // Never a cost of 0 (an empty prompt still draws a request's worth).
    expect(costOf(DIALECTS.fireworks, body, 0)).toEqual({ cost: 1, out: 16 });
    // Per key: a pool's request is split for a member whose row counts apart, whole for one that does not.
    expect(costFor(DIALECTS.anthropic, 28, 16)).toEqual({ cost: 12, out: 16 });
    expect(costFor(DIALECTS.bedrock, 28, 16)).toEqual({ cost: 28 });
    expect(costFor(DIALECTS.anthropic, 28, undefined)).toEqual({ cost: 28 });
    // A row whose windows count the prompt alone (Gemini's "Tokens per minute (input)") charges its tokens
    // windows it alone; its output goes to a window of generated tokens, where one is stated (Vertex's Claude).
    expect(costFor(DIALECTS.gemini, 28, 16)).toEqual({ cost: 12, out: 16 });
    expect(costFor(DIALECTS.gemini, 10, 16)).toEqual({ cost: 1, out: 16 });
    expect(costFor(DIALECTS.vertex, 28, 16)).toEqual({ cost: 12, out: 16 });
    for (const [name, d] of Object.entries(DIALECTS)) if (d.limits.promptOnly) expect(d.limits.output, name).toBeUndefined();
    // Every row that reads or may be stated a window of generated tokens sends its allowance; no other does.
    for (const [name, d] of Object.entries(DIALECTS)) expect("out" in costOf(d, body, 48), name).toBe(d.limits.output !== undefined || d.limits.promptOnly === true);
  });
});

describe("what a body asks for (issue 39)", () => {
  it("reads Gemini's generation config in either spelling, and its output field in either case", () => {
    expect(outputLimit({ generationConfig: { maxOutputTokens: 7 } })).toBe(7);
    expect(outputLimit({ generation_config: { max_output_tokens: 9 } })).toBe(9);
    expect(outputLimit({ generationConfig: { max_output_tokens: 11 } })).toBe(11);
    expect(outputLimit({ contents: [] })).toBeNull();
    expect(estimateTokens({ generation_config: { max_output_tokens: 9 } }, 4)).toBe(10);
  });

  it("reads Bedrock's own output limits: Converse's inferenceConfig.maxTokens, Nova's max_new_tokens, Llama's max_gen_len, Titan's maxTokenCount", () => {
    const converse = { messages: [{ role: "user", content: [{ text: "hi" }] }], inferenceConfig: { maxTokens: 1_000, temperature: 0 } };
    expect(outputLimit(converse)).toBe(1_000);
    // Before: the default 256 assumed, a quarter of what Bedrock reserves for it.
    expect(estimate(converse, 80)).toEqual({ cost: 20 + 1_000, out: 1_000 });
    expect(outputLimit({ inferenceConfig: { max_new_tokens: 300 } })).toBe(300);
    expect(outputLimit({ prompt: "hi", max_gen_len: 64 })).toBe(64);
    expect(outputLimit({ inputText: "hi", textGenerationConfig: { maxTokenCount: 42 } })).toBe(42);
    // Only in their objects, and only numbers.
    expect(outputLimit({ maxTokens: 5, inferenceConfig: "x" })).toBeNull();
    expect(outputLimit({ inferenceConfig: { maxTokens: "500" } })).toBeNull();
  });

  it("estimateFor: a row that reserves a model's whole output for a body that names no limit is charged it, where it is known", () => {
    const converse = { messages: [] };
    expect(estimateFor(DIALECTS.bedrock, "/us-east-1/model/m/converse", converse, 40, 64_000)).toEqual({ cost: 10 + 64_000, out: 64_000 });
    expect(estimateFor(DIALECTS.bedrock, "/us-east-1/model/m/converse", { ...converse, inferenceConfig: { maxTokens: 9 } }, 40, 64_000)).toEqual({ cost: 19, out: 9 });
    expect(estimateFor(DIALECTS.bedrock, "/us-east-1/model/m/converse", converse, 40)).toEqual({ cost: 10 + DEFAULT_OUTPUT_TOKENS, out: DEFAULT_OUTPUT_TOKENS });
    expect(estimateFor(DIALECTS.openai, "/v1/chat/completions", converse, 40, 64_000)).toEqual({ cost: 10 + DEFAULT_OUTPUT_TOKENS, out: DEFAULT_OUTPUT_TOKENS });
  });

  it("charges Bedrock's Claude 3.7 Sonnet and Claude 4 family an output token five times (token burndown rate), its other models once", () => {
    const sonnet = "us-east-1/us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    expect(costFor(DIALECTS.bedrock, 1_020, 1_000, sonnet)).toEqual({ cost: 5_020 });
    for (const m of ["us-east-1/anthropic.claude-3-7-sonnet-20250219-v1:0", "eu-west-1/global.anthropic.claude-opus-4-5-20251101-v1:0", "us-east-1/anthropic.claude-haiku-4-5-20251001-v1:0", "us-east-1/anthropic.claude-opus-4-1-20250805-v1:0", "us-west-2/anthropic.claude-sonnet-4-6"])
      expect(costFor(DIALECTS.bedrock, 1_020, 1_000, m), m).toEqual({ cost: 5_020 });
    for (const m of ["us-east-1/anthropic.claude-3-5-sonnet-20241022-v2:0", "us-east-1/anthropic.claude-3-haiku-20240307-v1:0", "us-east-1/meta.llama3-3-70b-instruct-v1:0", "us-east-1/amazon.nova-pro-v1:0"])
      expect(costFor(DIALECTS.bedrock, 1_020, 1_000, m), m).toEqual({ cost: 1_020 });
    // A model the rate names on another row (Anthropic's own API, Vertex's Claude) draws an output token once.
    expect(costFor(DIALECTS.vertex, 1_020, 1_000, "us-east5/claude-sonnet-4-5")).toEqual({ cost: 20, out: 1_000 }); // its windows count the prompt alone, its output apart
    expect(costFor(DIALECTS.anthropic, 1_020, 1_000, "claude-sonnet-4-5")).toEqual({ cost: 20, out: 1_000 });
    // No model given (a caller that does not know it): once.
    expect(costFor(DIALECTS.bedrock, 1_020, 1_000)).toEqual({ cost: 1_020 });
  });

  it("counts the answers one request is billed for: OpenAI's n and best_of, Gemini's candidateCount", () => {
    expect(choicesOf({})).toBe(1);
    expect(choicesOf(null)).toBe(1);
    expect(choicesOf({ n: 4 })).toBe(4);
    expect(choicesOf({ n: 2, best_of: 5 })).toBe(5);
    expect(choicesOf({ generationConfig: { candidateCount: 3 } })).toBe(3);
    expect(choicesOf({ generation_config: { candidate_count: 2 } })).toBe(2);
    expect(choicesOf({ n: 0 })).toBe(1);
    expect(choicesOf({ n: "8", best_of: -2 })).toBe(1);
    expect(choicesOf({ n: 2.5 })).toBe(3);
  });
});
