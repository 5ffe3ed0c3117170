// What a key's object reads of its provider's row (src/limiter/row-facts.ts).
import { describe, expect, it } from "vitest";
import { rowFacts } from "../../src/limiter/row-facts";

const meta = (provider: string, model: string) => ({ key: `${provider}:${model}:h`, provider, model });

describe("rowFacts", () => {
  it("says a key's tokens window leaves cache reads out where its dialect's row says so, for the models it does not except", () => {
    const facts = rowFacts(undefined);
    expect(facts(meta("anthropic", "claude-sonnet-4-5")).cacheReadsFree).toBe(true);
    expect(facts(meta("anthropic", "claude-3-5-haiku-20241022")).cacheReadsFree).toBe(false);
    expect(rowFacts(undefined)(meta("openai", "gpt-4o-mini")).cacheReadsFree).toBe(false);
    // A provider of the operator's that speaks Anthropic's dialect has its row's facts.
    const custom = rowFacts(JSON.stringify({ claude: { baseUrl: "https://claude.example.com", headers: "anthropic", dialect: "anthropic" } }));
    expect(custom(meta("claude", "claude-opus-4-1"))).toEqual({ stated: null, cacheReadsFree: true, drawn: null });
  });

  it("states a quota its operator gives, and nothing for a provider it does not know or a variable it cannot read", () => {
    const facts = rowFacts(JSON.stringify({ bedrock: { quota: { requestsPerMinute: 50 } } }));
    expect(facts(meta("bedrock", "anthropic.claude-sonnet-4"))).toMatchObject({ stated: { requests: 50 }, cacheReadsFree: false });
    expect(rowFacts(undefined)(meta("nobody", "m"))).toEqual({ stated: null, cacheReadsFree: false, drawn: null });
    expect(rowFacts("{not json")(meta("anthropic", "claude-sonnet-4-5"))).toEqual({ stated: null, cacheReadsFree: false, drawn: null });
  });

  it("says what an answer drew where the provider gives back the rest of a reservation (Bedrock): its prompt less cache reads, its output at the model's rate", () => {
    const facts = rowFacts(undefined);
    const t = { input: 1_000, output: 200, cached: 300, cacheWrite: 100 };
    expect(facts(meta("bedrock", "us-east-1/us.anthropic.claude-sonnet-4-5-20250929-v1:0")).drawn!(t)).toBe(700 + 5 * 200);
    expect(facts(meta("bedrock", "us-east-1/meta.llama3-3-70b-instruct-v1:0")).drawn!(t)).toBe(700 + 200);
    // Providers that keep what a request was charged, or that tell their windows in headers: nothing.
    for (const p of ["openai", "anthropic", "gemini", "vertex"]) expect(facts(meta(p, "m")).drawn, p).toBeNull();
  });
});
