// Crashes and Ctrl-C: the CLI as a child process, killed or interrupted, then resumed.
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN, cli, countLines, idCounts, inputOf, readOutput, runBatch, standin, tempDir, until, writeInput } from "./helpers.ts";

describe("batch, interrupted", () => {
  test("killed half-way (SIGKILL) and resumed: every custom_id exactly once, finished ones not resent", async () => {
    const s = await standin({ latencyMs: 40, rpm: 0, tpm: 0 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(300));
    const out = join(dir, "results.jsonl");

    const run = cli(["batch", input, "--out", out, "--base-url", s.url, "--concurrency", "8"]);
    await until(() => countLines(out) >= 100, 15_000, "100 output lines");
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");
    const before = readOutput(out).length;
    expect(idCounts(readOutput(out)).size).toBe(before);
    expect(before).toBeGreaterThanOrEqual(100);
    expect(before).toBeLessThan(300);
    // A crash mid-write leaves half a line: resume must drop it, not choke on it.
    appendFileSync(out, '{"id":"batch_req_x","custom_id":"req-29');
    s.resetStats();

    const summary = await runBatch({ input, out, baseUrl: s.url, resume: true });

    const lines = readOutput(out);
    const counts = idCounts(lines);
    expect(counts.size).toBe(300);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(lines.every((l) => l.response?.status_code === 200 && l.error === null)).toBe(true);
    // Only the items without an answer went out again.
    expect(s.stats().attempts).toBe(300 - before);
    expect(summary).toMatchObject({ skipped: before, succeeded: 300 - before, failed: 0, notDone: 0 });
  });

  test("Ctrl-C stops sending, lets requests in flight finish, writes them and says how to resume", async () => {
    const s = await standin({ latencyMs: 1_500, rpm: 0, tpm: 0 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(40));
    const out = join(dir, "results.jsonl");

    const run = cli(["batch", input, "--out", out, "--base-url", s.url, "--concurrency", "4"]);
    await until(() => s.stats().inFlight === 4, 10_000, "4 requests in flight");
    run.child.kill("SIGINT");
    const { code } = await run.exited;

    expect(code).toBe(130);
    const lines = readOutput(out);
    // Every request sent before Ctrl-C finishes and is written, and nothing more is sent: the 4 in
    // flight, plus the key's first request if it had already come back (a new key opens by steps).
    const stats = s.stats();
    const sent = stats.attempts;
    expect(sent).toBeGreaterThanOrEqual(4);
    expect(sent).toBeLessThanOrEqual(5);
    expect(lines).toHaveLength(sent);
    expect(lines.every((l) => l.response?.status_code === 200)).toBe(true);
    expect(stats).toMatchObject({ completed: sent, aborted: 0 });
    expect(run.stderr()).toContain("stopping: nothing new is sent");
    expect(run.stdout()).toMatch(/slotgate batch stopped: 40 lines/);
    expect(run.stdout()).toMatch(new RegExp(`succeeded\\s+${sent}\\n`));
    expect(run.stdout()).toMatch(new RegExp(`not done\\s+${40 - sent} `));
    expect(run.stderr()).toContain(`node ${BIN} batch ${input} --out ${out} --base-url ${s.url} --concurrency 4 --resume`);
  });

  test("a second Ctrl-C aborts requests in flight, recorded as interrupted; --resume finishes them", async () => {
    const s = await standin({ latencyMs: 5_000, rpm: 0, tpm: 0 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(12));
    const out = join(dir, "results.jsonl");

    const run = cli(["batch", input, "--out", out, "--base-url", s.url, "--concurrency", "4"]);
    await until(() => s.stats().inFlight === 4, 10_000, "4 requests in flight");
    run.child.kill("SIGINT");
    await until(() => run.stderr().includes("stopping"), 5_000, "the first Ctrl-C to be seen");
    run.child.kill("SIGINT");
    const { code } = await run.exited;

    expect(code).toBe(130);
    const cut = readOutput(out);
    expect(cut).toHaveLength(4);
    for (const l of cut) expect(l.error?.code).toBe("interrupted");
    expect(run.stdout()).toMatch(/not done\s+12 /);
    await until(() => s.stats().aborted === 4, 5_000, "the stand-in to see 4 callers leave");

    s.configure({ latencyMs: 5 });
    s.resetStats();
    const summary = await runBatch({ input, out, baseUrl: s.url, resume: true });
    const lines = readOutput(out);
    const counts = idCounts(lines);
    expect(counts.size).toBe(12);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(lines.every((l) => l.error === null)).toBe(true);
    expect(s.stats().attempts).toBe(12);
    expect(summary).toMatchObject({ skipped: 0, succeeded: 12 });
  });
});
