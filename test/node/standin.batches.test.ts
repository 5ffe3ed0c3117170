// The stand-in's provider batches, through the official SDKs: OpenAI's files and batches, Anthropic's
// message batches, their states, counts, result files, failures, expiry, cancel and queue room.
import { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { lineEndsAt, progress, type Clock } from "../support/standin/batch-clock.ts";
import type { Standin } from "../support/standin/index.ts";
import { anthropicClient, openaiClient, standin } from "./standin-helpers.ts";

const FAST = { batchValidatingMs: 100, batchTurnaroundMs: 600, batchFinalizingMs: 100 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const line = (i: number, model = "gpt-4o-mini") =>
  JSON.stringify({ custom_id: `r${i}`, method: "POST", url: "/v1/chat/completions", body: { model, max_tokens: 5, messages: [{ role: "user", content: `hello ${i}` }] } });

async function batchOf(s: Standin, n: number, key = "sk-test-openai", extra: Record<string, string> = {}) {
  const oa = openaiClient(s, key);
  const text = Array.from({ length: n }, (_, i) => line(i)).join("\n");
  const file = await oa.files.create({ file: await toFile(Buffer.from(text), "in.jsonl"), purpose: "batch" });
  return { oa, batch: await oa.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: extra }) };
}

async function waitFor<T>(get: () => Promise<T>, done: (v: T) => boolean, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (done(v) || Date.now() > end) return v;
    await sleep(50);
  }
}

describe("stand-in: the batch clock", () => {
  const c: Clock = { createdAt: 0, lines: 4, validatingMs: 100, turnaroundMs: 400, finalizingMs: 50, expiresAt: 10_000, refused: false, cancelAt: null };
  it("goes validating, in_progress (lines end evenly), finalizing, completed", () => {
    expect(progress(c, 50).status).toBe("validating");
    expect(progress(c, 100)).toMatchObject({ status: "in_progress", ended: 0, inProgressAt: 100 });
    expect(lineEndsAt(c, 1)).toBe(300);
    expect(progress(c, 300).ended).toBe(2);
    expect(progress(c, 500)).toMatchObject({ status: "finalizing", ended: 4, finalizingAt: 500 });
    expect(progress(c, 550)).toMatchObject({ status: "completed", completedAt: 550 });
  });
  it("expires at the window's end, cancels over finalizingMs, and fails when refused", () => {
    expect(progress({ ...c, expiresAt: 250 }, 300)).toMatchObject({ status: "expired", ended: 1, expiredAt: 250 });
    expect(progress({ ...c, cancelAt: 320 }, 330)).toMatchObject({ status: "cancelling", ended: 2 });
    expect(progress({ ...c, cancelAt: 320 }, 370)).toMatchObject({ status: "cancelled", cancelledAt: 370 });
    expect(progress({ ...c, refused: true }, 100)).toMatchObject({ status: "failed", ended: 0, failedAt: 100, inProgressAt: null });
  });
});

describe("stand-in: OpenAI batches", () => {
  it("runs a file through every state to an output file whose lines carry usage; other accounts see nothing", async () => {
    const s = await standin({ ...FAST, batchFailRate: 0.3, seed: 7 });
    const { oa, batch } = await batchOf(s, 20, undefined, { job: "j1" });
    expect(batch).toMatchObject({ object: "batch", status: "validating", request_counts: { total: 0 }, metadata: { job: "j1" } });
    const mid = await waitFor(() => oa.batches.retrieve(batch.id), (b) => b.status === "in_progress" && (b.request_counts?.completed ?? 0) > 0);
    expect(mid.request_counts!.total).toBe(20);
    const done = await waitFor(() => oa.batches.retrieve(batch.id), (b) => b.status === "completed");
    expect(done.request_counts).toEqual({ total: 20, completed: 20 - done.request_counts!.failed, failed: expect.any(Number) });
    expect(done.request_counts!.failed).toBeGreaterThan(0);
    const out = (await (await oa.files.content(done.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l));
    const errs = (await (await oa.files.content(done.error_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(out.length + errs.length).toBe(20);
    expect(out[0]).toMatchObject({ id: expect.stringMatching(/^batch_req_/), response: { status_code: 200, body: { usage: { completion_tokens: 5 } } }, error: null });
    expect(errs[0]).toMatchObject({ response: { status_code: 500, body: { error: { type: "server_error" } } }, error: null });
    const st = s.stats().batch;
    expect(st).toMatchObject({ created: 1, generations: out.length, failedLines: errs.length, uploads: 1 });
    expect(st.usage.output).toBe(5 * out.length);
    // Another credential is another account.
    const other = openaiClient(s, "sk-someone-else");
    await expect(other.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.content(done.output_file_id!)).rejects.toMatchObject({ status: 404 });
    expect((await other.batches.list()).data).toEqual([]);
  });

  it("expires lines still running at the window's end (error file: batch_expired) and cancels to cancelled", async () => {
    const s = await standin({ ...FAST, batchTurnaroundMs: 1_200, batchExpireMs: 500 });
    const { oa, batch } = await batchOf(s, 10);
    const expired = await waitFor(() => oa.batches.retrieve(batch.id), (b) => b.status === "expired");
    expect(expired.status).toBe("expired");
    const errs = (await (await oa.files.content(expired.error_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(errs.length).toBeGreaterThan(0);
    expect(errs.every((e) => e.error?.code === "batch_expired" && e.response === null)).toBe(true);
    s.configure({ batchExpireMs: 86_400_000 });
    const second = await batchOf(s, 10);
    await sleep(300);
    const cancelling = await oa.batches.cancel(second.batch.id);
    expect(cancelling.status).toBe("cancelling");
    const cancelled = await waitFor(() => oa.batches.retrieve(second.batch.id), (b) => b.status === "cancelled");
    expect(cancelled.request_counts!.completed + cancelled.request_counts!.failed).toBe(10);
    await expect(oa.batches.cancel(second.batch.id)).rejects.toMatchObject({ status: 409 });
    expect(s.stats().batch.cancels).toBe(1);
  });

  it("past the enqueued-token limit a batch fails at validation with token_limit_exceeded; once one ends there is room", async () => {
    const s = await standin({ ...FAST, batchTurnaroundMs: 800, batchEnqueuedTokens: 100 });
    const first = await batchOf(s, 10);
    const second = await batchOf(s, 10);
    const refused = await waitFor(() => second.oa.batches.retrieve(second.batch.id), (b) => b.status === "failed");
    expect(refused.errors?.data?.[0]).toMatchObject({ code: "token_limit_exceeded" });
    await waitFor(() => first.oa.batches.retrieve(first.batch.id), (b) => b.status === "completed");
    const third = await batchOf(s, 10);
    expect((await waitFor(() => third.oa.batches.retrieve(third.batch.id), (b) => b.status === "completed")).status).toBe("completed");
    expect(s.stats().batch).toMatchObject({ created: 3, refused: 1, generations: 20 });
  });

  it("refuses a file with two models or a duplicate custom_id (the batch fails with the line named)", async () => {
    const s = await standin(FAST);
    const oa = openaiClient(s);
    const text = [line(0), line(1, "gpt-4o"), line(0)].join("\n");
    const file = await oa.files.create({ file: await toFile(Buffer.from(text), "in.jsonl"), purpose: "batch" });
    const b = await oa.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    const failed = await waitFor(() => oa.batches.retrieve(b.id), (x) => x.status === "failed");
    expect(failed.errors?.data?.map((e) => [e.code, e.line])).toEqual([["mismatched_model", 2], ["duplicate_custom_id", 3]]);
  });
});

describe("stand-in: Anthropic message batches", () => {
  const request = (i: number) => ({ custom_id: `a${i}`, params: { model: "claude-haiku-4-5", max_tokens: 5, messages: [{ role: "user" as const, content: `hi ${i}` }] } });

  it("in_progress to ended, results as JSONL with usage; 404 for another account", async () => {
    const s = await standin({ ...FAST, batchFailRate: 0.3, seed: 3 });
    const an = anthropicClient(s);
    // Which lines fail is drawn from the batch's id (new each run): 40 lines at 0.3 leave none failed
    // once in 1.6 million runs (12 did once in 70, and CI saw it).
    const b = await an.messages.batches.create({ requests: Array.from({ length: 40 }, (_, i) => request(i)) });
    expect(b).toMatchObject({ type: "message_batch", processing_status: "in_progress", request_counts: { processing: 40 }, results_url: null });
    const ended = await waitFor(() => an.messages.batches.retrieve(b.id), (x) => x.processing_status === "ended");
    expect(ended.request_counts.succeeded + ended.request_counts.errored).toBe(40);
    const results = [];
    for await (const r of await an.messages.batches.results(b.id)) results.push(r);
    expect(results).toHaveLength(40);
    const ok = results.filter((r) => r.result.type === "succeeded");
    expect(ok.length).toBe(ended.request_counts.succeeded);
    expect(ok[0]!.result).toMatchObject({ message: { usage: { output_tokens: 5 } } });
    expect(results.find((r) => r.result.type === "errored")?.result).toMatchObject({ error: { type: "error", error: { type: "api_error" } } });
    await expect(anthropicClient(s, "sk-ant-other").messages.batches.retrieve(b.id)).rejects.toMatchObject({ status: 404 });
  });

  it("a cancel ends it with the rest canceled; past the enqueued limit create is a 429", async () => {
    const s = await standin({ ...FAST, batchTurnaroundMs: 2_000, batchEnqueuedTokens: 60 });
    const an = anthropicClient(s);
    const b = await an.messages.batches.create({ requests: Array.from({ length: 8 }, (_, i) => request(i)) });
    await expect(an.messages.batches.create({ requests: Array.from({ length: 8 }, (_, i) => request(i)) })).rejects.toMatchObject({ status: 429 });
    await sleep(500);
    expect((await an.messages.batches.cancel(b.id)).processing_status).toBe("canceling");
    const ended = await waitFor(() => an.messages.batches.retrieve(b.id), (x) => x.processing_status === "ended");
    expect(ended.request_counts.canceled).toBeGreaterThan(0);
    expect(ended.request_counts.canceled + ended.request_counts.succeeded).toBe(8);
  });
});
