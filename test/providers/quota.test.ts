// `PROVIDERS.<name>.quota` (src/providers/quota.ts): what an operator may state, what it is refused
// with (a config error naming the field, never the value), and what a key of a model is stated.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/error";
import { statedFor } from "../../src/providers/quota";
import { providers } from "../../src/providers/registry";

const BEDROCK_CLAUDE = "us.anthropic.claude-haiku-4-5-20251001-v1:0";

describe("PROVIDERS' quota", () => {
  it("a built-in keeps its row and takes a quota: the provider's for its keys, a model's own over it", () => {
    const t = providers({ bedrock: { quota: { requestsPerMinute: 50, tokensPerMinute: 200_000, models: { [BEDROCK_CLAUDE]: { requestsPerMinute: 250 } } } } });
    expect(t.bedrock).toMatchObject({ dialect: "bedrock", baseUrl: expect.stringContaining("amazonaws.com") });
    expect(statedFor(t.bedrock!.quota, "meta.llama3-3-70b-instruct-v1:0")).toEqual({ requests: 50, tokens: 200_000 });
    // A model's entry is the whole statement for it: its tokens are not the provider's.
    expect(statedFor(t.bedrock!.quota, BEDROCK_CLAUDE)).toEqual({ requests: 250 });
    expect(statedFor(t.vertex!.quota, "gemini-2.5-flash")).toBeNull();
  });

  it("states models only: other models' keys are learned from refusals as before", () => {
    const t = providers({ vertex: { quota: { models: { "gemini-2.5-flash": { tokensPerMinute: 4_000_000 } } } } });
    expect(statedFor(t.vertex!.quota, "gemini-2.5-flash")).toEqual({ tokens: 4_000_000 });
    expect(statedFor(t.vertex!.quota, "gemini-2.5-pro")).toBeNull();
    // A model id is matched whole, never as a prefix or a prototype's property.
    expect(statedFor(t.vertex!.quota, "gemini-2.5-flash-lite")).toBeNull();
    expect(statedFor(t.vertex!.quota, "constructor")).toBeNull();
  });

  it.each([
    [{ requestsPerMinute: 0 }, "PROVIDERS.bedrock.quota.requestsPerMinute must be a number above 0"],
    [{ requestsPerMinute: "50" }, "PROVIDERS.bedrock.quota.requestsPerMinute must be a number above 0"],
    [{ tokensPerMinute: -1 }, "PROVIDERS.bedrock.quota.tokensPerMinute must be a number above 0"],
    [{ tokensPerMinute: 1e12 }, "at most"],
    [{ rpm: 50 }, "PROVIDERS.bedrock.quota takes requestsPerMinute, tokensPerMinute, outputTokensPerMinute and models, not rpm"],
    // Bedrock's tokens quota counts the output too (at its burndown rate): a window of output alone would never be drawn.
    [{ outputTokensPerMinute: 8_000 }, "PROVIDERS.bedrock.quota.outputTokensPerMinute: this provider's tokensPerMinute counts output tokens too"],
    [{ models: { m: { outputTokensPerMinute: 8_000 } } }, `PROVIDERS.bedrock.quota.models["m"].outputTokensPerMinute: this provider's tokensPerMinute counts output tokens too`],
    [[50], "PROVIDERS.bedrock.quota must be an object"],
    [50, "PROVIDERS.bedrock.quota must be an object"],
    [{ models: [] }, "PROVIDERS.bedrock.quota.models must be an object of model ids"],
    [{ models: { m: { models: {} } } }, `PROVIDERS.bedrock.quota.models["m"] takes requestsPerMinute, tokensPerMinute, outputTokensPerMinute, not models`],
    [{ models: { m: { requestsPerMinute: null } } }, `PROVIDERS.bedrock.quota.models["m"].requestsPerMinute must be a number`],
  ])("refuses %j with a config error naming the field", (quota, message) => {
    let err: unknown;
    try {
      providers({ bedrock: { quota } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(message);
  });

  it("a key that names its region (Bedrock's, Vertex's) takes the model's entry with its region, else without it", () => {
    const spec = providers({ bedrock: { quota: { requestsPerMinute: 10, models: { "meta.llama": { requestsPerMinute: 100 }, "eu-west-1/meta.llama": { requestsPerMinute: 40 } } } } }).bedrock!.quota;
    expect(statedFor(spec, "us-east-1/meta.llama", true)).toEqual({ requests: 100 });
    expect(statedFor(spec, "eu-west-1/meta.llama", true)).toEqual({ requests: 40 });
    expect(statedFor(spec, "us-east-1/meta.other", true)).toEqual({ requests: 10 });
    // Unscoped (an OpenRouter model id has a slash of its own): only the whole name.
    expect(statedFor(spec, "us-east-1/meta.llama")).toEqual({ requests: 10 });
  });

  it("Vertex's Claude is stated its output tokens a minute apart (partner-models/claude/quotas); a row with output windows of its own may be too", () => {
    const claude = "us-east5/claude-sonnet-4-5";
    const t = providers({
      vertex: { quota: { requestsPerMinute: 60, tokensPerMinute: 200_000, models: { "claude-sonnet-4-5": { tokensPerMinute: 400_000, outputTokensPerMinute: 40_000 } } } },
      anthropic: { quota: { outputTokensPerMinute: 8_000 } },
      "my-vertex": { baseUrl: "https://vertex.example.test", dialect: "vertex", quota: { outputTokensPerMinute: 1_000 } },
    });
    expect(statedFor(t.vertex!.quota, claude, true)).toEqual({ tokens: 400_000, output: 40_000 });
    expect(statedFor(t.vertex!.quota, "us-central1/gemini-2.5-flash", true)).toEqual({ requests: 60, tokens: 200_000 });
    expect(statedFor(t.anthropic!.quota, "claude-haiku-4-5")).toEqual({ output: 8_000 });
    expect(statedFor(t["my-vertex"]!.quota, "claude-haiku-4-5")).toEqual({ output: 1_000 });
    // OpenAI's and a generic provider's tokens quota counts both.
    expect(() => providers({ openai: { quota: { outputTokensPerMinute: 1 } } })).toThrow(ConfigError);
    expect(() => providers({ local: { baseUrl: "http://127.0.0.1:9", quota: { outputTokensPerMinute: 1 } } })).toThrow(ConfigError);
  });

  it("a statement of nothing is no statement", () => {
    expect(statedFor(providers({ groq: { quota: {} } }).groq!.quota, "llama")).toBeNull();
  });
});
