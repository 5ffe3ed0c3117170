// `slotgate batch` without a gateway: the provider (a stand-in) called directly, the limiter in-process.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { chatLine, cli, idCounts, inputOf, KEY, readOutput, runBatch, standin, tempDir, writeInput } from "./helpers.ts";

describe("batch, direct mode", () => {
  test("500 lines against an RPM-limited provider: every custom_id answered exactly once", async () => {
    // 200 requests/s with a 60-request bucket: far less than 16 open requests at 20 ms would send.
    const s = await standin({ rpm: 12_000, burst: 0.005, latencyMs: 20, retryAfter: "exact" });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(500));
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input, out, baseUrl: s.url });

    const lines = readOutput(out);
    expect(lines).toHaveLength(500);
    const counts = idCounts(lines);
    expect(counts.size).toBe(500);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    for (const l of lines) {
      expect(l.error).toBeNull();
      expect(l.id).toMatch(/^batch_req_[0-9a-f]{32}$/);
      expect(l.response?.status_code).toBe(200);
      expect(l.response?.request_id).toMatch(/^req_/);
      expect((l.response?.body as { object: string }).object).toBe("chat.completion");
    }
    const stats = s.stats();
    expect(stats.successes).toBe(500);
    // Every 429 the provider sent was absorbed by a retry, none reached the output.
    expect(summary).toMatchObject({ lines: 500, succeeded: 500, failed: 0, notDone: 0, stopped: false });
    expect(summary.absorbed429).toBe(stats.rateLimited);
    expect(stats.perCredential[KEY]).toBe(stats.attempts);
    // Each 429 shut the in-process gate for its retry-after (whole seconds here): nobody was sent
    // in the second after it, beyond requests already on the wire when it came back.
    for (const hit of stats.log.filter((a) => a.status === 429))
      expect(stats.log.filter((a) => a.at > hit.at + 250 && a.at < hit.at + 900)).toEqual([]);
    // The bucket holds 60 and refills 200/s: 500 cannot all pass in under 2.2 s, so the limit bit.
    expect(summary.wallMs).toBeGreaterThan(2_000);
  });

  test("bad lines become error lines naming their line numbers; the run goes on", async () => {
    const s = await standin();
    const dir = tempDir();
    const input = writeInput(dir, [
      chatLine("ok-1"),
      "this is not json",
      { method: "POST", url: "/v1/chat/completions", body: { model: "m" } }, // no custom_id
      "",
      chatLine("bad-url", { url: "/v1/chat/complete" }),
      chatLine("bad-provider", { provider: "nope" }),
      chatLine("bad-body", { body: "text" }),
      chatLine("ok-2"),
      "[1, 2]",
    ]);
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input, out, baseUrl: s.url });

    const byId = new Map(readOutput(out).map((l) => [l.custom_id, l]));
    expect([...byId.keys()].sort()).toEqual(
      ["bad-body", "bad-provider", "bad-url", "line-2", "line-3", "line-9", "ok-1", "ok-2"].sort(),
    );
    expect(byId.get("ok-1")?.response?.status_code).toBe(200);
    expect(byId.get("ok-2")?.response?.status_code).toBe(200);
    const expectBad = (id: string, line: number, text: string) => {
      const l = byId.get(id)!;
      expect(l.response).toBeNull();
      expect(l.error?.code).toBe("invalid_line");
      expect(l.error?.message).toMatch(new RegExp(`^line ${line}: `));
      expect(l.error?.message).toContain(text);
    };
    expectBad("line-2", 2, "not valid JSON");
    expectBad("line-3", 3, "no custom_id");
    expectBad("bad-url", 5, 'unknown url "/v1/chat/complete"');
    expectBad("bad-provider", 6, 'unknown provider "nope"');
    expectBad("bad-body", 7, "body must be a JSON object");
    expectBad("line-9", 9, "not a JSON object");
    expect(s.stats().attempts).toBe(2);
    expect(summary).toMatchObject({ lines: 8, succeeded: 2, failed: 6, failedByReason: { invalid_line: 6 }, retryable: 0 });
  });

  test("an insufficient_quota credential: one error line per item after exactly one upstream attempt", async () => {
    const s = await standin({ quotaExhaustedKeys: ["sk-broke", "sk-ant-broke"] });
    const dir = tempDir();
    const input = writeInput(dir, [
      chatLine("q-1"),
      chatLine("q-2"),
      chatLine("q-3"),
      { custom_id: "a-1", provider: "anthropic", method: "POST", url: "/v1/messages", body: { model: "claude-haiku-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] } },
    ]);
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input, out, baseUrl: s.url, env: { OPENAI_API_KEY: "sk-broke", ANTHROPIC_API_KEY: "sk-ant-broke" } });

    const lines = readOutput(out);
    expect(lines).toHaveLength(4);
    for (const l of lines.filter((x) => x.custom_id.startsWith("q-"))) {
      expect(l.error?.code).toBe("insufficient_quota");
      expect(l.response?.status_code).toBe(429);
      expect((l.response?.body as { error: { code: string } }).error.code).toBe("insufficient_quota");
    }
    // Anthropic's credit exhaustion is a 400 with no code: still a hard quota, still one attempt.
    const a = lines.find((x) => x.custom_id === "a-1")!;
    expect(a.error?.code).toBe("quota_exhausted");
    expect(a.response?.status_code).toBe(400);
    const stats = s.stats();
    expect(stats.quotaErrors).toBe(4);
    expect(stats.attempts).toBe(4);
    expect(stats.perCredential).toEqual({ "sk-broke": 3, "sk-ant-broke": 1 });
    expect(summary).toMatchObject({ failed: 4, retryable: 0, absorbed429: 0, failedByReason: { insufficient_quota: 3, quota_exhausted: 1 } });

    // A hard quota is a final answer: --resume sends nothing again.
    const again = await runBatch({ input, out, baseUrl: s.url, resume: true, env: { OPENAI_API_KEY: "sk-broke", ANTHROPIC_API_KEY: "sk-ant-broke" } });
    expect(again).toMatchObject({ skipped: 4, succeeded: 0, failed: 0 });
    expect(s.stats().attempts).toBe(4);
    expect(readOutput(out)).toHaveLength(4);
  });

  test("Anthropic lines, its OTPM binding: read as the gateway reads Anthropic (input and output apart), not found by 429s", async () => {
    // Ten requests' worth of output a second (max_tokens 200), prompts and requests plenty.
    const s = await standin({ rpm: 6_000, tpm: 0, itpm: 3_600_000, otpm: 10 * 60 * 200, burst: 1 / 60, latencyMs: 30 });
    const dir = tempDir();
    const lines = Array.from({ length: 50 }, (_, i) => ({ custom_id: `a-${i}`, provider: "anthropic", method: "POST", url: "/v1/messages", body: { model: "claude-haiku-4-5", max_tokens: 200, messages: [{ role: "user", content: `line ${i}` }] } }));
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input: writeInput(dir, lines), out, baseUrl: s.url, concurrency: 16, env: { ANTHROPIC_API_KEY: KEY } });

    expect(summary).toMatchObject({ lines: 50, succeeded: 50, failed: 0 });
    const stats = s.stats();
    // Read as every family (its `tokens-*`, the two limits added up, charged prompt and max_tokens):
    // the output limit was found by refusals, 23 of 73 attempts here before; 0 of 50 now, 3 of 53 once
    // in CI beside other suites on two cores (the 1 s bucket's pace is the machine's to keep).
    expect(stats.rateLimited / stats.attempts, `${stats.rateLimited} of ${stats.attempts} attempts refused`).toBeLessThanOrEqual(0.1);
    console.log(`[batch direct] anthropic, OTPM binding: ${stats.rateLimited} of ${stats.attempts} attempts refused, ${summary.wallMs} ms`);
  });

  test("Anthropic lines sharing a system prompt read from its prompt cache: charged what its ITPM counts, so they run as wide as --concurrency", async () => {
    // ITPM 600,000 a minute in a bucket of 16,000: two whole 8,000-token prompts.
    const s = await standin({ rpm: 60_000, tpm: 0, itpm: 600_000, otpm: 6_000_000, burst: 16_000 / 600_000, latencyMs: 30 });
    const dir = tempDir();
    const system = [{ type: "text", text: "Grade the answer by the rubric. ".repeat(1_000), cache_control: { type: "ephemeral" } }];
    const lines = Array.from({ length: 48 }, (_, i) => ({ custom_id: `c-${i}`, provider: "anthropic", method: "POST", url: "/v1/messages", body: { model: "claude-haiku-4-5", max_tokens: 8, system, messages: [{ role: "user", content: `answer ${i}` }] } }));
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input: writeInput(dir, lines), out, baseUrl: s.url, concurrency: 8, env: { ANTHROPIC_API_KEY: KEY } });

    expect(summary).toMatchObject({ lines: 48, succeeded: 48, failed: 0 });
    const stats = s.stats();
    expect(stats.rateLimited / stats.attempts, `${stats.rateLimited} of ${stats.attempts} attempts refused`).toBeLessThanOrEqual(0.1);
    // Charged whole, at most two prompts fit the bucket at once; charged what is not read from the cache, eight.
    expect(stats.peakInFlight, "lines in flight at the provider at once").toBeGreaterThanOrEqual(6);
  });

  test("an OpenAI line with a PDF inline above a told TPM: sent once the window is full, not failed as too large", async () => {
    const s = await standin({ tpm: 30_000, latencyMs: 20 });
    const dir = tempDir();
    const pdf = `data:application/pdf;base64,${"JVBERi0xLjQK".padEnd(300_000, "A")}`;
    const out = join(dir, "results.jsonl");
    const input = writeInput(dir, [
      chatLine("first"),
      chatLine("pdf", { body: { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: [{ type: "text", text: "summarise it" }, { type: "file", file: { filename: "a.pdf", file_data: pdf } }] }] } }),
    ]);

    const summary = await runBatch({ input, out, baseUrl: s.url, concurrency: 1 });

    expect(summary).toMatchObject({ succeeded: 2, failed: 0 });
    expect(readOutput(out).find((l) => l.custom_id === "pdf")?.response?.status_code).toBe(200);
  });

  test("OpenAI lines asking about pictures by URL: charged what its TPM counts an image, not the URL's bytes, so few are refused", async () => {
    // A bucket of 10,000 tokens refilled in a second; the stand-in counts each picture 765, a line about 3,100.
    const s = await standin({ tpm: 600_000, burst: 1 / 60, latencyMs: 20 });
    const dir = tempDir();
    const pictures = (i: number) => Array.from({ length: 4 }, (_, j) => ({ type: "image_url", image_url: { url: `https://example.com/${i}-${j}.png` } }));
    const lines = Array.from({ length: 12 }, (_, i) => chatLine(`p-${i}`, { body: { model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: [{ type: "text", text: "what differs?" }, ...pictures(i)] }] } }));
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input: writeInput(dir, lines), out, baseUrl: s.url, concurrency: 12 });

    expect(summary).toMatchObject({ lines: 12, succeeded: 12, failed: 0 });
    const stats = s.stats();
    // Charged the URLs' bytes (about 150 a line), all twelve went at once and many were refused: 8 of 20 attempts before.
    expect(stats.rateLimited / stats.attempts, `${stats.rateLimited} of ${stats.attempts} attempts refused`).toBeLessThanOrEqual(0.1);
    console.log(`[batch direct] openai, pictures by URL: ${stats.rateLimited} of ${stats.attempts} attempts refused, ${summary.wallMs} ms`);
  });

  test("duplicate custom_ids: exit 2 naming them and their lines, nothing sent", async () => {
    const s = await standin();
    const dir = tempDir();
    const input = writeInput(dir, [chatLine("a"), chatLine("b"), chatLine("a"), chatLine("c"), chatLine("b"), chatLine("a")]);
    const out = join(dir, "results.jsonl");

    const run = cli(["batch", input, "--out", out, "--base-url", s.url]);
    const { code } = await run.exited;

    expect(code).toBe(2);
    expect(run.stderr()).toContain('"a" on lines 1, 3, 6');
    expect(run.stderr()).toContain('"b" on lines 2, 5');
    expect(run.stderr()).not.toContain('"c"');
    expect(s.stats().attempts).toBe(0);
    expect(existsSync(out)).toBe(false);
  });

  test("a missing credential or an occupied output stops the run before anything is sent", async () => {
    const s = await standin();
    const dir = tempDir();
    const input = writeInput(dir, [chatLine("a"), { ...chatLine("b"), provider: "anthropic", url: "/v1/messages" }]);
    const out = join(dir, "results.jsonl");
    await expect(runBatch({ input, out, baseUrl: s.url, env: { OPENAI_API_KEY: KEY } })).rejects.toThrow(/ANTHROPIC_API_KEY is not set/);

    const done = writeInput(dir, [chatLine("x")], "done.jsonl");
    await expect(runBatch({ input, out: done, baseUrl: s.url })).rejects.toThrow(/already holds results: pass --resume/);
    expect(s.stats().attempts).toBe(0);
  });
});
