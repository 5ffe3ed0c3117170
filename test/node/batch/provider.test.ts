// `slotgate batch --mode provider|auto` straight to the stand-in's batch APIs: the job killed and
// resumed, lines that failed or expired in a batch run synchronously once, a deadline cancels,
// a full queue waits, Anthropic's ids mapped back, and the summary's batch prices.
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { chatLine, cli, countLines, idCounts, inputOf, KEY, readOutput, runBatch, standin, tempDir, until, writeInput } from "./helpers.ts";
import { countEvents, FAST_BATCHES, ranByChunk, standinBatches, syncAnswers } from "./provider-helpers.ts";

const exactlyOnce = (out: string, n: number) => {
  const counts = idCounts(readOutput(out));
  expect(counts.size).toBe(n);
  expect([...counts.values()].every((k) => k === 1)).toBe(true);
};

describe("provider batches, direct", () => {
  test("2,000 lines killed half-way (SIGKILL) and resumed: every line once, no chunk's batch made twice, generations = lines", async () => {
    // Room for ten batches at a time: the job goes in waves, and the kill lands between them.
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 1_000, batchEnqueuedTokens: 20_000 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(2_000));
    const out = join(dir, "results.jsonl");
    const args = ["batch", input, "--out", out, "--base-url", s.url, "--mode", "provider", "--batch-lines", "100", "--poll", "1"];
    const run = cli(args);
    await until(() => countLines(out) >= 500, 60_000, "500 answered lines");
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");
    const before = countLines(out);
    expect(before).toBeLessThan(2_000);
    expect(countEvents(out, "batch")).toBeGreaterThan(0);

    const summary = await runBatch({ input, out, baseUrl: s.url, mode: "provider", resume: true, batchLines: 100, pollMs: 1_000 });
    exactlyOnce(out, 2_000);
    expect(readOutput(out).every((l) => l.error === null && l.response?.status_code === 200)).toBe(true);
    expect(summary).toMatchObject({ skipped: before, succeeded: 2_000 - before, failed: 0, notDone: 0 });
    // Each of the 20 chunks ran in exactly one batch; the others were refused for queue room, and ran nothing.
    const batches = await standinBatches(s);
    const ran = ranByChunk(batches);
    expect(ran.size).toBe(20);
    expect([...ran.values()].every((b) => b.length === 1)).toBe(true);
    expect(batches.filter((b) => b.status === "failed").every((b) => b.errors?.data[0]?.code === "token_limit_exceeded")).toBe(true);
    expect(s.stats().batch.generations).toBe(2_000);
    expect(syncAnswers(s)).toBe(0);
  });

  test("lines that failed or expired in their batch run synchronously, once; the cost is at batch prices", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 1_200, batchExpireMs: 700, batchFailRate: 0.1 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(200));
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input, out, baseUrl: s.url, mode: "provider", batchLines: 100, pollMs: 200 });
    exactlyOnce(out, 200);
    expect(readOutput(out).every((l) => l.error === null)).toBe(true);
    const st = s.stats().batch;
    expect(st.expiredLines).toBeGreaterThan(0);
    expect(st.failedLines).toBeGreaterThan(0);
    // Each line was generated once: in its batch, or synchronously after it failed or expired there.
    expect(syncAnswers(s)).toBe(st.expiredLines + st.failedLines);
    expect(st.generations + syncAnswers(s)).toBe(200);
    expect(summary.batches).toMatchObject({ answered: st.generations, fallback: st.expiredLines + st.failedLines, running: [] });
    // gpt-4o-mini at half its 0.15 / 0.6 for the batch answers.
    const half = (st.usage.input * 0.075 + st.usage.output * 0.3) / 1e6;
    expect(summary.spend.batchCostUsd).toBeCloseTo(half, 12);
    expect(summary.spend.costUsd).toBeLessThan(summary.spend.syncCostUsd);
  });

  test("at --deadline running batches are cancelled and what they did not answer runs synchronously", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 30_000 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(60));
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input, out, baseUrl: s.url, mode: "provider", batchLines: 30, pollMs: 200, deadline: Date.now() + 1_000 });
    exactlyOnce(out, 60);
    expect(readOutput(out).every((l) => l.error === null)).toBe(true);
    const st = s.stats().batch;
    expect(st.cancels).toBe(2);
    expect(st.cancelledLines).toBeGreaterThan(0);
    expect(st.generations + syncAnswers(s)).toBe(60);
    expect(summary.batches?.byStatus).toEqual({ cancelled: 2 });
  });

  test("auto: Anthropic lines by message batch (ids it would refuse mapped back), lines with no batch API synchronously", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 300 });
    const dir = tempDir();
    const claude = (id: string) => chatLine(id, { provider: "anthropic", url: "/v1/messages", body: { model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: `hi ${id}` }] } });
    const lines = [claude("q/1"), claude("q 2"), claude("ok-3"), chatLine("oa-1"), chatLine("groq-1", { provider: "groq" })];
    const input = writeInput(dir, lines);
    const env = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: "sk-ant-batch", GROQ_API_KEY: "gsk-batch" };
    const refused = cli(["batch", input, "--out", join(dir, "p.jsonl"), "--base-url", s.url, "--mode", "provider"], env);
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr()).toMatch(/1 lines have no batch API here.*groq-1 \(groq \/v1\/chat\/completions\).*--mode auto/s);

    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input, out, baseUrl: s.url, mode: "auto", pollMs: 200, env });
    exactlyOnce(out, 5);
    const byId = new Map(readOutput(out).map((l) => [l.custom_id, l]));
    expect((byId.get("q/1")!.response!.body as { type: string }).type).toBe("message");
    expect(byId.get("groq-1")!.response!.status_code).toBe(200);
    expect(summary.batches).toMatchObject({ answered: 4, fallback: 1, byStatus: { ended: 1, completed: 1 } });
    expect(s.stats().batch.generations).toBe(4);
  });
});
