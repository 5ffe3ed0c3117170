// Provider batches when things stop: a create whose answer is lost (found again, never made twice),
// Ctrl-C leaving the batches running with the commands to resume or cancel, --cancel, and a second
// Ctrl-C offering to cancel them.
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN, chatLine, cli, idCounts, inputOf, readOutput, runBatch, standin, tempDir, until, writeInput } from "./helpers.ts";
import { countEvents, FAST_BATCHES, journal, ranByChunk, standinBatches, syncAnswers } from "./provider-helpers.ts";

/** fetch that sends the first create (POST .../batches) and then loses its answer, as a dropped connection would. */
function losingFirstCreate(): { fetch: typeof fetch; lost: () => number } {
  let lost = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === "POST" && /\/batches$/.test(String(input)) && lost === 0) {
      lost += 1;
      throw new TypeError("fetch failed: the connection was reset");
    }
    return res;
  };
  return { fetch: wrapped, lost: () => lost };
}

describe("provider batches, stopped", () => {
  test("OpenAI: a create whose answer was lost is found by its metadata, not made again", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 300 });
    const dir = tempDir();
    const out = join(dir, "results.jsonl");
    const f = losingFirstCreate();
    await runBatch({ input: writeInput(dir, inputOf(40)), out, baseUrl: s.url, mode: "provider", batchLines: 20, pollMs: 200, fetch: f.fetch });
    expect(f.lost()).toBe(1);
    expect(idCounts(readOutput(out)).size).toBe(40);
    const ran = ranByChunk(await standinBatches(s));
    expect([...ran.values()].map((b) => b.length)).toEqual([1, 1]);
    expect(s.stats().batch.created).toBe(2);
    expect(journal(out).filter((e) => e.e === "submit")).toHaveLength(2);
  });

  test("Anthropic: a create whose answer was lost is found by its time and size, not made again", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 300 });
    const dir = tempDir();
    const out = join(dir, "results.jsonl");
    const claude = (i: number) => chatLine(`m-${i}`, { provider: "anthropic", url: "/v1/messages", body: { model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: `hi ${i}` }] } });
    const f = losingFirstCreate();
    await runBatch({ input: writeInput(dir, Array.from({ length: 30 }, (_, i) => claude(i))), out, baseUrl: s.url, mode: "provider", pollMs: 200, fetch: f.fetch, env: { ANTHROPIC_API_KEY: "sk-ant-lost" } });
    expect(f.lost()).toBe(1);
    expect(idCounts(readOutput(out)).size).toBe(30);
    expect(s.stats().batch).toMatchObject({ created: 1, generations: 30 });
  });

  test("Ctrl-C leaves the batches running and prints how to resume and how to cancel; --cancel cancels; --resume finishes", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 60_000 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(40));
    const out = join(dir, "results.jsonl");
    const args = ["batch", input, "--out", out, "--base-url", s.url, "--mode", "provider", "--batch-lines", "20", "--poll", "1"];
    const run = cli(args);
    await until(() => countEvents(out, "batch") === 2, 20_000, "both batches created");
    run.child.kill("SIGINT");
    const { code } = await run.exited;
    expect(code).toBe(130);
    expect(run.stdout()).toMatch(/still running\s+batch_\w+, batch_\w+\s+\(--resume attaches to them\)/);
    expect(run.stderr()).toContain(`node ${BIN} batch ${args.slice(1).join(" ")} --resume`);
    expect(run.stderr()).toContain(`node ${BIN} batch ${args.slice(1).join(" ")} --cancel`);
    expect(s.stats().batch.cancels).toBe(0);

    // Its lines are in batches: a synchronous resume would pay for them twice, and is refused.
    const sync = cli(["batch", input, "--out", out, "--base-url", s.url, "--resume"]);
    expect((await sync.exited).code).toBe(2);
    expect(sync.stderr()).toMatch(/names provider batches of this output: resume it with --mode provider/);

    const cancel = cli([...args, "--cancel"]);
    expect((await cancel.exited).code).toBe(0);
    expect(s.stats().batch.cancels).toBe(2);
    expect(s.stats().batch.created).toBe(2);

    const summary = await runBatch({ input, out, baseUrl: s.url, mode: "provider", resume: true, batchLines: 20, pollMs: 200 });
    expect(idCounts(readOutput(out)).size).toBe(40);
    expect(readOutput(out).every((l) => l.error === null)).toBe(true);
    expect(s.stats().batch.created).toBe(2);
    expect(s.stats().batch.generations + syncAnswers(s)).toBe(40);
    expect(summary.batches?.byStatus).toEqual({ cancelled: 2 });
  });

  test("a second Ctrl-C offers to cancel the running batches; yes cancels them", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 60_000 });
    const dir = tempDir();
    const out = join(dir, "results.jsonl");
    const stop = new AbortController();
    const abort = new AbortController();
    const asked: string[] = [];
    const done = runBatch({
      input: writeInput(dir, inputOf(20)), out, baseUrl: s.url, mode: "provider", pollMs: 200, stop: stop.signal, abort: abort.signal,
      lingerMs: 5_000, confirm: async (q) => (asked.push(q), true),
    });
    await until(() => countEvents(out, "batch") === 1, 10_000, "the batch created");
    stop.abort();
    await new Promise((r) => setTimeout(r, 300));
    abort.abort();
    const summary = await done;
    expect(asked).toEqual([expect.stringMatching(/^Cancel the 1 running batches\?/)]);
    expect(summary.stopped).toBe(true);
    expect(s.stats().batch.cancels).toBe(1);
    expect(journal(out).some((e) => e.e === "cancel")).toBe(true);
  });

  test("a key that may not make batches (401, 402, 403) stops the job with the reason and nothing written; --resume goes on once it may", async () => {
    const s = await standin({ ...FAST_BATCHES, batchTurnaroundMs: 200, apiKeys: ["sk-another-key"] });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(10));
    const out = join(dir, "results.jsonl");
    const args = ["batch", input, "--out", out, "--base-url", s.url, "--mode", "provider", "--poll", "1"];
    const run = cli(args);
    expect((await run.exited).code).toBe(1);
    expect(run.stderr()).toMatch(/the openai batch API refused this job \(invalid_api_key\): Incorrect API key provided/);
    expect(run.stderr()).toContain("--resume");
    expect(readOutput(out)).toEqual([]);
    s.configure({ apiKeys: null });
    await runBatch({ input, out, baseUrl: s.url, mode: "provider", resume: true, pollMs: 200 });
    expect(idCounts(readOutput(out)).size).toBe(10);
    expect(s.stats().batch).toMatchObject({ created: 1, generations: 10 });
  });
});
