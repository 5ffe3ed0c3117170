import { describe, expect, it } from "vitest";
import { DEFAULT_COST, DEFAULT_OUTPUT_TOKENS, estimateTokens } from "../../src/policy/estimate";

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

  it("charges a flat guess for a body that is not JSON, and 1 for an empty one", () => {
    expect(estimateTokens(null, 5_000)).toBe(DEFAULT_COST);
    expect(estimateTokens(null, 0)).toBe(1);
  });
});
