// `slotgate batch` sums up the tokens its answers reported and what they cost.
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { formatSummary } from "../../../src/cli/progress.ts";
import { chatLine, cli, idCounts, KEY, readOutput, runBatch, standin, tempDir, writeInput } from "./helpers.ts";

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

// `--mode flex` (issue 35) straight at the stand-in: the same job at the flex tier where the line's
// model sells it, the stand-in shedding a share of flex requests with OpenAI's own 429.
describe("batch --mode flex", () => {
  const PRICES = { "gpt-5-mini": { input: 0.25, output: 2 } };
  const flexLine = (id: string) => chatLine(id, { body: { model: "gpt-5-mini", max_tokens: 8, messages: [{ role: "user", content: `hello ${id}` }] } });
  const lines = [...Array.from({ length: 60 }, (_, i) => flexLine(`f-${i}`)), chatLine("mini-1"), chatLine("mini-2")];

  test("every line answered once, a shed flex request waited through or sent at standard, a model without flex at standard; priced by the tier that served", async () => {
    const s = await standin({ latencyMs: 5, rpm: 0, tpm: 0, flexShed: 0.3, prices: PRICES });
    const dir = tempDir();
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input: writeInput(dir, lines), out, baseUrl: s.url, mode: "flex", retry: { baseBackoffMs: 10, maxBackoffMs: 50 } });
    expect(summary.succeeded).toBe(62);
    expect([...idCounts(readOutput(out)).values()].every((n) => n === 1)).toBe(true);
    const st = s.stats();
    expect(st.tiers.flex.shed).toBeGreaterThan(5);
    // gpt-4o-mini sells no flex: sent at standard, never refused (the stand-in answers flex for it with a 400).
    expect(st.invalid).toBe(0);
    expect(st.tiers.flex.answers + st.tiers.standard.answers).toBe(62);
    expect(st.tiers.flex.answers).toBeGreaterThanOrEqual(55);
    // The summary's flex cost is the stand-in's charge at flex: OpenAI's flex is half the standard price.
    expect(summary.spend.tiers.flex!.answers).toBe(st.tiers.flex.answers);
    expect(summary.spend.tiers.flex!.costUsd).toBeCloseTo(st.tiers.flex.usd, 12);
    expect(formatSummary(summary)).toMatch(/of which\s+\$\d+\.\d{4} at flex \(\d+\), \$\d+\.\d{4} at standard \(\d+\); the same job at standard: \$\d+\.\d{4} \(0\.5\dx\)/);
    // Why the others were not at flex (issue 39): the two gpt-4o-mini lines, and the flex lines the tier refused.
    const why = summary.spend.why;
    expect(why.not_sold).toBe(2);
    expect(summary.spend.notSold).toEqual(["gpt-4o-mini"]);
    expect((why.refused ?? 0) + (why.shed ?? 0)).toBe(st.tiers.standard.answers - 2);
    expect(formatSummary(summary)).toMatch(/not at flex\s+2 because gpt-4o-mini sells no flex here/);
  });

  test("a model that sells no flex: the summary says every line went at standard, and why (issue 39)", async () => {
    const s = await standin({ latencyMs: 5, rpm: 0, tpm: 0, prices: PRICES });
    const dir = tempDir();
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input: writeInput(dir, [chatLine("mini-1"), chatLine("mini-2"), chatLine("mini-3")]), out, baseUrl: s.url, mode: "flex" });
    expect(summary.succeeded).toBe(3);
    const text = formatSummary(summary);
    expect(text).toMatch(/of which\s+\$\d+\.\d{4} at standard \(3\)/);
    expect(text).toMatch(/not at flex\s+3 because gpt-4o-mini sells no flex here/);
  });

  test("flex fully shed: every line at standard, at once after the tier looks shed", async () => {
    const s = await standin({ latencyMs: 5, rpm: 0, tpm: 0, flexShed: 1, prices: PRICES });
    const dir = tempDir();
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input: writeInput(dir, lines), out, baseUrl: s.url, mode: "flex", concurrency: 4, retry: { baseBackoffMs: 10, maxBackoffMs: 50 } });
    expect(summary.succeeded).toBe(62);
    expect(s.stats().tiers.standard.answers).toBe(62);
    // Nine refusals in a row make the tier look shed; then a probe a second, not a try per line.
    expect(s.stats().tiers.flex.shed).toBeLessThan(30);
    expect((summary.spend.why.refused ?? 0) + (summary.spend.why.shed ?? 0) + (summary.spend.why.not_sold ?? 0)).toBe(62);
    expect(formatSummary(summary)).toMatch(/after flex refused them for capacity/);
  });

  test("--mode flex takes no batch flags; --mode auto with a deadline within a day runs at flex", async () => {
    const s = await standin({ latencyMs: 5, rpm: 0, tpm: 0, prices: PRICES });
    const dir = tempDir();
    const input = writeInput(dir, lines.slice(0, 4));
    const bad = cli(["batch", input, "--out", join(dir, "o.jsonl"), "--base-url", s.url, "--mode", "flex", "--deadline", "2h"]);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr()).toMatch(/--deadline is for --mode provider or auto/);
    const summary = await runBatch({ input, out: join(dir, "auto.jsonl"), baseUrl: s.url, mode: "auto", deadline: Date.now() + 2 * 3_600_000 });
    expect(summary.batches).toBeUndefined();
    expect(s.stats().tiers.flex.answers).toBe(4);
    expect(s.stats().batch.created).toBe(0);
  });
});
