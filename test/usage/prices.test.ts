import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env";
import { PRICES_CHECKED } from "../../src/providers/prices";
import { batchPrice, costOf, dearest, priceOf, priceTable } from "../../src/usage/prices";

const t = (input: number, output: number, cached = 0, cacheWrite = 0) => ({ input, output, cached, cacheWrite });

describe("price table", () => {
  const builtIn = priceTable(undefined);

  it("has the main models of the built-in providers, and says when it was checked", () => {
    expect(PRICES_CHECKED).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(priceOf(builtIn, "openai", "gpt-4o-mini")).toEqual({ input: 0.15, output: 0.6, cached: 0.075, context: 128_000, maxOutput: 16_384 });
    for (const [p, m] of [["anthropic", "claude-sonnet-4-20250514"], ["gemini", "gemini-2.5-flash"], ["groq", "llama-3.3-70b-versatile"], ["mistral", "mistral-large-latest"], ["deepseek", "deepseek-chat"], ["xai", "grok-3"]])
      expect(priceOf(builtIn, p!, m!), `${p}:${m}`).not.toBeNull();
  });

  it("a dated or -latest name is priced as its base name; other suffixes are not guessed", () => {
    expect(priceOf(builtIn, "openai", "gpt-4o-2024-08-06")).toEqual(priceOf(builtIn, "openai", "gpt-4o"));
    expect(priceOf(builtIn, "anthropic", "claude-3-5-haiku-20241022")).toEqual({ input: 0.8, output: 4, cached: 0.08, cacheWrite: 1, context: 200_000, maxOutput: 8_192 });
    expect(priceOf(builtIn, "openai", "gpt-4o-audio-preview")).toBeNull();
    expect(priceOf(builtIn, "openai", "gpt-4o-mini-2024-07-18")).toEqual(priceOf(builtIn, "openai", "gpt-4o-mini"));
  });

  it("the table is per provider: the same name elsewhere (a different price there) is unpriced", () => {
    expect(priceOf(builtIn, "openrouter", "gpt-4o")).toBeNull();
    expect(priceOf(builtIn, "local", "whatever")).toBeNull();
  });

  it("PRICES overrides and adds, by provider:model or by model alone", () => {
    const table = priceTable('{"openai:gpt-4o-mini":{"input":1,"output":2},"my-model":{"input":3,"output":4,"cached":0.5}}');
    // A built-in name keeps the model's own bounds (they are the model's, not its price).
    expect(priceOf(table, "openai", "gpt-4o-mini")).toEqual({ input: 1, output: 2, context: 128_000, maxOutput: 16_384 });
    expect(priceOf(table, "local", "my-model")).toEqual({ input: 3, output: 4, cached: 0.5 });
    expect(priceOf(table, "openai", "gpt-4o")).toEqual(priceOf(builtIn, "openai", "gpt-4o"));
    expect(priceOf(priceTable({ "x:y": { input: 0, output: 0 } }), "x", "y")).toEqual({ input: 0, output: 0 });
  });

  it("Vertex by location: Claude from Sonnet 4.5 10% dearer at a regional or multi-region endpoint than at global; older Claude and Gemini one price", () => {
    const at = (m: string) => priceOf(builtIn, "vertex", m);
    expect(at("global/claude-sonnet-4-5@20250929")).toMatchObject({ input: 3, output: 15, cached: 0.3, cacheWrite: 3.75 });
    for (const loc of ["us-east5", "europe-west1", "us", "eu"]) expect(at(`${loc}/claude-sonnet-4-5@20250929`), loc).toMatchObject({ input: 3.3, output: 16.5, cached: 0.33, cacheWrite: 4.125 });
    expect(at("us-east5/claude-opus-4-5@20251101")).toMatchObject({ input: 5.5, output: 27.5 });
    expect(at("global/claude-haiku-4-5")).toMatchObject({ input: 1, output: 5 });
    expect(at("us-east5/claude-sonnet-4@20250514")).toEqual(at("global/claude-sonnet-4@20250514"));
    expect(at("us-central1/gemini-2.5-flash")).toEqual(at("global/gemini-2.5-flash"));
    expect(at("us-central1/gemini-2.5-flash")).toMatchObject({ input: 0.3, output: 2.5 });
    // A model PRICES names is priced so everywhere, unless it names a location too.
    const own = priceTable({ "vertex:claude-sonnet-4-5": { input: 2, output: 10 } });
    expect(priceOf(own, "vertex", "global/claude-sonnet-4-5@20250929")).toMatchObject({ input: 2, output: 10 });
    expect(priceOf(own, "vertex", "us-east5/claude-sonnet-4-5@20250929")).toMatchObject({ input: 2, output: 10 });
    const both = priceTable({ "vertex:claude-sonnet-4-5": { input: 2, output: 10 }, "vertex:global/claude-sonnet-4-5": { input: 1.5, output: 8 } });
    expect(priceOf(both, "vertex", "global/claude-sonnet-4-5@20250929")).toMatchObject({ input: 1.5, output: 8 });
    expect(priceOf(both, "vertex", "us-east5/claude-sonnet-4-5")).toMatchObject({ input: 2, output: 10 });
    // Other providers' rows are not touched.
    expect(priceOf(own, "anthropic", "claude-sonnet-4-5")).toEqual(priceOf(builtIn, "anthropic", "claude-sonnet-4-5"));
  });

  it("a malformed PRICES is a ConfigError naming it", () => {
    for (const raw of ["{", "[]", '"x"', '{"m":{"input":1}}', '{"m":{"input":-1,"output":1}}', '{"m":{"input":1,"output":"2"}}', '{"m":3}', '{"m":{"input":1,"output":1,"cached":null}}'])
      expect(() => priceTable(raw), raw).toThrow(ConfigError);
    expect(() => priceTable("{")).toThrow(/PRICES/);
  });

  it("cost: uncached input, cached reads, cache writes and output, each at its rate", () => {
    const p = { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75 };
    expect(costOf(t(1_000_000, 0), p)).toBeCloseTo(3, 12);
    expect(costOf(t(1_000_000, 1_000_000, 400_000, 100_000), p)).toBeCloseTo(0.5 * 3 + 0.4 * 0.3 + 0.1 * 3.75 + 15, 12);
    // No cached or cache-write rate: input's.
    expect(costOf(t(100, 10, 50, 50), { input: 2, output: 4 })).toBeCloseTo((100 * 2 + 10 * 4) / 1e6, 15);
    expect(costOf(t(0, 0), p)).toBe(0);
  });

  it("provider batches: half of each rate by default; PRICES may give a batch price of its own", () => {
    const mini = priceOf(priceTable(undefined), "openai", "gpt-4o-mini")!;
    expect(batchPrice(mini)).toEqual({ input: 0.075, output: 0.3, cached: 0.0375, context: 128_000, maxOutput: 16_384 });
    const table = priceTable('{"house":{"input":2,"output":4,"batch":{"input":0.5,"output":1},"maxOutput":100}}');
    expect(batchPrice(priceOf(table, "openai", "house")!)).toEqual({ input: 0.5, output: 1, maxOutput: 100 });
    for (const raw of ['{"m":{"input":1,"output":1,"batch":{"input":1}}}', '{"m":{"input":1,"output":1,"batch":3}}'])
      expect(() => priceTable(raw), raw).toThrow(/batch/);
  });

  it("every built-in model has a context and a maximum output: what a budget reserves when a request names no limit (issue 39)", () => {
    for (const [name, p] of builtIn) {
      expect(p.context, name).toBeGreaterThan(0);
      expect(p.maxOutput, name).toBeLessThanOrEqual(p.context!);
    }
    expect(priceOf(builtIn, "openai", "gpt-5")).toMatchObject({ context: 400_000, maxOutput: 128_000 });
  });

  it("a long-context band bills every token of a prompt past it at the band's rates (Gemini 2.5 Pro, Claude Sonnet 4.5's 1M context)", () => {
    const pro = priceOf(builtIn, "gemini", "gemini-2.5-pro")!;
    expect(pro.long).toEqual({ above: 200_000, input: 2.5, output: 15, cached: 0.625 });
    expect(costOf(t(200_000, 1_000), pro)).toBeCloseTo((200_000 * 1.25 + 1_000 * 10) / 1e6, 12);
    expect(costOf(t(200_001, 1_000), pro)).toBeCloseTo((200_001 * 2.5 + 1_000 * 15) / 1e6, 12);
    const sonnet = priceOf(builtIn, "anthropic", "claude-sonnet-4-5-20250929")!;
    expect(costOf(t(300_000, 10, 100_000, 0), sonnet)).toBeCloseTo((200_000 * 6 + 100_000 * 0.6 + 10 * 22.5) / 1e6, 12);
    // Batches and tiers scale the band too.
    expect(batchPrice(pro).long).toEqual({ above: 200_000, input: 1.25, output: 7.5, cached: 0.3125 });
  });

  it("PRICES takes maxOutput, context and a long band; malformed ones are refused naming them", () => {
    const table = priceTable({ "local:m": { input: 1, output: 2, maxOutput: 4_096, context: 32_768, long: { above: 16_000, input: 2, output: 4 } } });
    expect(priceOf(table, "local", "m")).toEqual({ input: 1, output: 2, maxOutput: 4_096, context: 32_768, long: { above: 16_000, input: 2, output: 4 } });
    for (const raw of [{ m: { input: 1, output: 1, maxOutput: -1 } }, { m: { input: 1, output: 1, context: 1.5 } }, { m: { input: 1, output: 1, long: { input: 1, output: 1 } } }, { m: { input: 1, output: 1, long: { above: 5, input: 1 } } }])
      expect(() => priceTable(raw), JSON.stringify(raw)).toThrow(/maxOutput and context|long/);
  });

  it("dearest: a price at least as dear as each, rate by rate, its band included (a request that may be served at flex or standard)", () => {
    const std = { input: 1, output: 8, cached: 0.1, maxOutput: 100 };
    const flex = { input: 0.5, output: 4, cached: 0.05, maxOutput: 100 };
    const prio = { input: 2, output: 6, long: { above: 10, input: 4, output: 12 }, maxOutput: 100 };
    expect(dearest([flex, std])).toEqual(std);
    // A price with no cached rate bills cached reads at its input rate: the dearer of the two.
    expect(dearest([std, prio])).toEqual({ input: 2, output: 8, cached: 2, maxOutput: 100, long: { above: 10, input: 4, output: 12, cached: 4 } });
    for (const p of [std, flex, prio]) for (const tokens of [t(5, 50), t(50, 5)]) expect(costOf(tokens, dearest([std, flex, prio]))).toBeGreaterThanOrEqual(costOf(tokens, p));
  });
});
