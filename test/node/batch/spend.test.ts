// `slotgate batch` sums up the tokens its answers reported and what they cost.
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { formatSummary } from "../../../src/cli/progress.ts";
import { chatLine, KEY, readOutput, runBatch, standin, tempDir, writeInput } from "./helpers.ts";

describe("batch summary: tokens and cost", () => {
  test("the stand-in's own usage, summed exactly; cost at the price table; unpriced models named", async () => {
    const s = await standin({ latencyMs: 5 });
    const dir = tempDir();
    const lines = [
      ...Array.from({ length: 6 }, (_, i) => chatLine(`mini-${i}`, { body: { model: "gpt-4o-mini", max_tokens: 4 + i, messages: [{ role: "user", content: `hello ${"word ".repeat(i * 3)}` }] } })),
      chatLine("house-1", { body: { model: "house-model", max_tokens: 8, messages: [{ role: "user", content: "hi" }] } }),
      chatLine("unpriced-1", { body: { model: "mystery-model", max_tokens: 8, messages: [{ role: "user", content: "hi" }] } }),
    ];
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input: writeInput(dir, lines), out, baseUrl: s.url, env: { OPENAI_API_KEY: KEY, PRICES: '{"house-model":{"input":2,"output":4}}' } });
    const used = s.stats().usage;
    expect(summary.succeeded).toBe(8);
    expect(summary.spend.inputTokens).toBe(used.input);
    expect(summary.spend.outputTokens).toBe(used.output);
    expect(summary.spend).toMatchObject({ unpriced: 1, unknownUsage: 0 });
    // The expected cost from the answers themselves: gpt-4o-mini 0.15 / 0.6 (built in), house-model 2 / 4 (PRICES).
    const rate: Record<string, [number, number]> = { "gpt-4o-mini": [0.15, 0.6], "house-model": [2, 4] };
    let expected = 0;
    for (const l of readOutput(out)) {
      const b = l.response!.body as { model: string; usage: { prompt_tokens: number; completion_tokens: number } };
      const r = rate[b.model];
      if (r) expected += (b.usage.prompt_tokens * r[0] + b.usage.completion_tokens * r[1]) / 1e6;
    }
    expect(summary.spend.costUsd).toBeCloseTo(expected, 12);
    const text = formatSummary(summary);
    expect(text).toMatch(/tokens\s+\d[\d,]* in, \d[\d,]* out/);
    expect(text).toMatch(/cost\s+\$\d+\.\d{4}\s+\(1 answers unpriced\)/);
  });

  test("a malformed PRICES stops the run before anything is sent, naming it", async () => {
    const s = await standin();
    const dir = tempDir();
    await expect(runBatch({ input: writeInput(dir, [chatLine("a")]), out: join(dir, "o.jsonl"), baseUrl: s.url, env: { OPENAI_API_KEY: KEY, PRICES: "{" } })).rejects.toThrow(/PRICES/);
    expect(s.stats().attempts).toBe(0);
  });
});
