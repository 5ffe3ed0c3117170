import { describe, expect, it } from "vitest";
import { errorType, hostOf, limitScope, modelOfPath, outputBurndown, priceOf, REFUSALS } from "../../../src/providers/drafts/bedrock";

describe("Bedrock draft row", () => {
  it("a limit is the account's, region's and model's (an ARN counts as what it names), never a credential's", () => {
    const profile = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    expect(limitScope("111122223333", "us-east-1", profile)).toBe(`bedrock:111122223333:us-east-1:${profile}`);
    expect(limitScope("111122223333", "us-east-1", `arn:aws:bedrock:us-east-1:111122223333:inference-profile/${profile}`)).toBe(limitScope("111122223333", "us-east-1", profile));
    expect(limitScope("111122223333", "us-west-2", profile)).not.toBe(limitScope("111122223333", "us-east-1", profile));
    expect(modelOfPath(`/model/${encodeURIComponent(profile)}/converse-stream`)).toBe(profile);
  });

  it("counts Claude 3.7 and 4.x output five times against a quota, other models once", () => {
    expect(outputBurndown("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe(5);
    expect(outputBurndown("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0")).toBe(5);
    expect(outputBurndown("anthropic.claude-3-5-haiku-20241022-v1:0")).toBe(1);
    expect(outputBurndown("meta.llama3-3-70b-instruct-v1:0")).toBe(1);
  });

  it("prices a global profile at the base price and a regional one 10% up for Claude 4.5, ARNs included", () => {
    expect(priceOf("global.anthropic.claude-sonnet-4-5-20250929-v1:0")).toMatchObject({ input: 3, output: 15, maxOutput: 64_000 });
    expect(priceOf("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toMatchObject({ input: 3.3, output: 16.5, cached: 0.33 });
    expect(priceOf("arn:aws:bedrock:eu-west-1:111122223333:inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0")).toMatchObject({ input: 1.1, output: 5.5 });
    expect(priceOf("us.anthropic.claude-sonnet-4-20250514-v1:0")).toMatchObject({ input: 3, output: 15 });
    expect(priceOf("us.meta.llama4-maverick-17b-instruct-v1:0")).toMatchObject({ input: 0.24, context: 1_000_000 });
    expect(priceOf("cohere.command-r-v1:0")).toBeNull();
  });

  it("reads a refusal's type from x-amzn-errortype, and knows a bad key from a rate limit", () => {
    expect(errorType(new Headers({ "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/" }))).toBe("ThrottlingException");
    expect(REFUSALS.ThrottlingException!.meaning).toBe("rate_limit");
    expect(REFUSALS.InvalidSignatureException!.meaning).toBe("bad_key");
    expect(REFUSALS.ModelNotReadyException).toEqual({ status: 429, meaning: "transient" });
    expect(hostOf("us-east-1")).toBe("https://bedrock-runtime.us-east-1.amazonaws.com");
    expect(hostOf("cn-north-1")).toBe("https://bedrock-runtime.cn-north-1.amazonaws.com.cn");
  });
});
