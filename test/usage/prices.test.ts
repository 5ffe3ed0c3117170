import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env";
import { batchPrice, costOf, PRICES_CHECKED, priceOf, priceTable } from "../../src/usage/prices";

const t = (input: number, output: number, cached = 0, cacheWrite = 0) => ({ input, output, cached, cacheWrite });

describe("price table", () => {
  const builtIn = priceTable(undefined);

  it("has the main models of the built-in providers, and says when it was checked", () => {
    expect(PRICES_CHECKED).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(priceOf(builtIn, "openai", "gpt-4o-mini")).toEqual({ input: 0.15, output: 0.6, cached: 0.075 });
    for (const [p, m] of [["anthropic", "claude-sonnet-4-20250514"], ["gemini", "gemini-2.5-flash"], ["groq", "llama-3.3-70b-versatile"], ["mistral", "mistral-large-latest"], ["deepseek", "deepseek-chat"], ["xai", "grok-3"]])
      expect(priceOf(builtIn, p!, m!), `${p}:${m}`).not.toBeNull();
  });

  it("a dated or -latest name is priced as its base name; other suffixes are not guessed", () => {
    expect(priceOf(builtIn, "openai", "gpt-4o-2024-08-06")).toEqual(priceOf(builtIn, "openai", "gpt-4o"));
    expect(priceOf(builtIn, "anthropic", "claude-3-5-haiku-20241022")).toEqual({ input: 0.8, output: 4, cached: 0.08, cacheWrite: 1 });
    expect(priceOf(builtIn, "openai", "gpt-4o-audio-preview")).toBeNull();
    expect(priceOf(builtIn, "openai", "gpt-4o-mini-2024-07-18")).toEqual(priceOf(builtIn, "openai", "gpt-4o-mini"));
  });

  it("the table is per provider: the same name elsewhere (a different price there) is unpriced", () => {
    expect(priceOf(builtIn, "openrouter", "gpt-4o")).toBeNull();
    expect(priceOf(builtIn, "local", "whatever")).toBeNull();
  });

  it("PRICES overrides and adds, by provider:model or by model alone", () => {
    const table = priceTable('{"openai:gpt-4o-mini":{"input":1,"output":2},"my-model":{"input":3,"output":4,"cached":0.5}}');
    expect(priceOf(table, "openai", "gpt-4o-mini")).toEqual({ input: 1, output: 2 });
    expect(priceOf(table, "local", "my-model")).toEqual({ input: 3, output: 4, cached: 0.5 });
    expect(priceOf(table, "openai", "gpt-4o")).toEqual(priceOf(builtIn, "openai", "gpt-4o"));
    expect(priceOf(priceTable({ "x:y": { input: 0, output: 0 } }), "x", "y")).toEqual({ input: 0, output: 0 });
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
    expect(batchPrice(mini)).toEqual({ input: 0.075, output: 0.3, cached: 0.0375 });
    const table = priceTable('{"house":{"input":2,"output":4,"batch":{"input":0.5,"output":1}}}');
    expect(batchPrice(priceOf(table, "openai", "house")!)).toEqual({ input: 0.5, output: 1 });
    for (const raw of ['{"m":{"input":1,"output":1,"batch":{"input":1}}}', '{"m":{"input":1,"output":1,"batch":3}}'])
      expect(() => priceTable(raw), raw).toThrow(/batch/);
  });
});
