// A batch's results are metered where they pass: into the ledger's batch_usage at batch prices,
// once per line however often they are read, apart from synchronous spend in GET /admin/usage;
// a budgeted key reserves the batch's estimate at creation and settles with its results.
import { env, exports } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OwnedObjects } from "../../src/batches/owned";
import { forgetViews } from "../../src/pools/route";
import { writeRows } from "../../src/usage/ledger";
import { batchUpstream, CLAUDE_USAGE, LINE_USAGE, uploadForm } from "../support/batch-upstream";
import { admin, call, errorOf, KEY_A, KEY_B, type Minted, mint } from "../support/vk";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

const book = (vk: Minted) => env.BATCH_BOOKS.get(env.BATCH_BOOKS.idFromName(`${vk.name}\n${vk.createdAt}`));
/** Waits for the book to hold `n` records, then writes them to the ledger now. */
async function flushed(vk: Minted, n: number): Promise<void> {
  await vi.waitFor(() => runInDurableObject(book(vk), (o: OwnedObjects) => expect(o["ledger"].pending).toBe(n)));
  await runInDurableObject(book(vk), (o: OwnedObjects) => o["ledger"].flush(Date.now()));
}
const usage = async (q: string) => (await (await admin(`/admin/usage?since=${Date.now() - 3_600_000}&${q}`)).json()) as { rows: Record<string, unknown>[]; totals: Record<string, number> };

async function openaiJob(vk: Minted, lines: number, { look = true } = {}) {
  const up = await exports.default.fetch("http://gateway/openai/v1/files", { method: "POST", headers: { authorization: `Bearer ${vk.key}` }, body: uploadForm(lines) });
  const file = (await up.json()) as { id: string };
  const made = await call(vk.key, { path: "/openai/v1/batches", body: { input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" } });
  if (made.status !== 200) return { made };
  const batch = (await made.json()) as { id: string };
  if (!look) return { made, batch: batch.id };
  const done = (await (await call(vk.key, { method: "GET", path: `/openai/v1/batches/${batch.id}` })).json()) as { output_file_id: string; error_file_id: string | null };
  const read = (file: string, headers: Record<string, string> = {}) => call(vk.key, { method: "GET", path: `/openai/v1/files/${file}/content`, headers }).then((r) => r.text());
  const download = () => read(done.output_file_id);
  return { made, batch: batch.id, download, read, done };
}

/** What `n` lines answered with LINE_USAGE cost at gpt-4o-mini's batch price. */
const linesCost = (n: number) => (n * LINE_USAGE.prompt_tokens * 0.075 + n * LINE_USAGE.completion_tokens * 0.3) / 1e6;

/** Runs the book's alarm as if its time to read the batch itself had come. */
async function rereadNow(vk: Minted): Promise<void> {
  await runInDurableObject(book(vk), (_o: OwnedObjects, state) => {
    state.storage.sql.exec("UPDATE owned SET reread_at = ? WHERE reread_at IS NOT NULL", Date.now() - 1);
  });
  await runDurableObjectAlarm(book(vk));
}

const spendOf = async (vk: Minted) =>
  ((await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; spend: { usd: number; reservedUsd: number } }[] }).virtualKeys.find((k) => k.name === vk.name)!.spend;

describe("batch results in the ledger", () => {
  it("each line once however often the output is read, at half the price, told apart from synchronous spend", async () => {
    batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"] });
    const { download } = await openaiJob(vk, 5);
    await download!();
    await download!();
    await flushed(vk, 5);
    const batch = await usage(`mode=batch&by=virtualKey`);
    const row = batch.rows.find((r) => r.virtualKey === vk.name)!;
    const half = (5 * LINE_USAGE.prompt_tokens * 0.075 + 5 * LINE_USAGE.completion_tokens * 0.3) / 1e6;
    expect(row).toMatchObject({ requests: 5, inputTokens: 50, outputTokens: 20 });
    expect(row.costUsd).toBeCloseTo(half, 12);
    // Read again later: nothing more to meter.
    await download!();
    await runInDurableObject(book(vk), (o: OwnedObjects) => expect(o["ledger"].pending).toBe(0));
    const byMode = await usage("by=mode");
    expect(byMode.rows.some((r) => r.mode === "batch")).toBe(true);
    expect(byMode.rows.every((r) => r.mode === "batch" || r.mode === "sync")).toBe(true);
    expect((await admin("/admin/usage?mode=later")).status).toBe(400);
  });

  it("Anthropic results: metered as read, at half price", async () => {
    batchUpstream();
    const vk = await mint("claude", { scopes: ["batches"] });
    const headers = { "x-api-key": vk.key, "anthropic-version": "2023-06-01", "content-type": "application/json" };
    const requests = ["a", "b", "c"].map((id) => ({ custom_id: id, params: { model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] } }));
    const made = (await (await exports.default.fetch("http://gateway/anthropic/v1/messages/batches", { method: "POST", headers, body: JSON.stringify({ requests }) })).json()) as { results_url: string };
    await (await exports.default.fetch(made.results_url, { headers })).text();
    await flushed(vk, 3);
    const row = (await usage("mode=batch&by=virtualKey")).rows.find((r) => r.virtualKey === vk.name)!;
    expect(row).toMatchObject({ requests: 3, inputTokens: 3 * CLAUDE_USAGE.input_tokens, outputTokens: 3 * CLAUDE_USAGE.output_tokens });
    expect(row.costUsd).toBeCloseTo((3 * 12 * 0.5 + 3 * 6 * 2.5) / 1e6, 12);
  });
});

describe("a budgeted key's batches", () => {
  it("reserves the batch's estimate when it is made, and settles with what its lines cost once they are read", async () => {
    batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"], budget: 5 });
    const { download } = await openaiJob(vk, 4);
    const reserved = await spendOf(vk);
    expect(reserved.reservedUsd).toBeGreaterThan(0);
    expect(reserved.usd).toBe(0);
    await download!();
    const cost = (4 * LINE_USAGE.prompt_tokens * 0.075 + 4 * LINE_USAGE.completion_tokens * 0.3) / 1e6;
    await vi.waitFor(async () => expect((await spendOf(vk)).reservedUsd).toBe(0));
    expect((await spendOf(vk)).usd).toBeCloseTo(cost, 12);
  });

  it("is settled by what its lines cost whatever order its files are read in: the error file first never closes it (issue 33)", async () => {
    batchUpstream({ fail: 1 });
    const vk = await mint("duo", { scopes: ["batches"], budget: 5 });
    const { read, done, download } = await openaiJob(vk, 4);
    expect(done!.error_file_id).toBeTruthy();
    // The error file, whole: one expired line, no usage; the batch stays open.
    expect(await read!(done!.error_file_id!)).toContain("batch_expired");
    await sleep(50);
    expect((await spendOf(vk)).reservedUsd).toBeGreaterThan(0);
    await download!();
    await vi.waitFor(async () => expect((await spendOf(vk)).reservedUsd).toBe(0));
    expect((await spendOf(vk)).usd).toBeCloseTo(linesCost(3), 12);
    // Read again, and the gateway's own read: nothing more is charged.
    await download!();
    await rereadNow(vk);
    expect((await spendOf(vk)).usd).toBeCloseTo(linesCost(3), 12);
  });

  it("a Range read of the output's tail never closes it: the lines read are counted, the rest when they come (issue 33)", async () => {
    batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"], budget: 5 });
    // A first batch read whole shows where its last line starts; the second's output is the same shape.
    const whole = await (await openaiJob(vk, 4)).download!();
    const lines = whole.trim().split("\n");
    expect(lines).toHaveLength(4);
    const second = await openaiJob(vk, 4);
    const tail = await second.read!(second.done!.output_file_id, { range: `bytes=${whole.length - lines.at(-1)!.length - 1}-` });
    expect(tail.trim().split("\n")).toEqual([lines.at(-1)]);
    await sleep(50);
    const mid = await spendOf(vk);
    expect(mid.reservedUsd).toBeGreaterThan(0);
    await second.download!();
    await vi.waitFor(async () => expect((await spendOf(vk)).reservedUsd).toBe(0));
    expect((await spendOf(vk)).usd).toBeCloseTo(linesCost(8), 12);
  });

  it("results never read are read by the gateway itself: after its holder saw it end, or when it never looked (issue 33)", async () => {
    const up = batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"], budget: 5 });
    // Seen ended, never downloaded.
    await openaiJob(vk, 3);
    // Never looked at again after it was made.
    const { batch } = await openaiJob(vk, 2, { look: false });
    expect((await spendOf(vk)).reservedUsd).toBeGreaterThan(0);
    const before = up.calls.length;
    await rereadNow(vk);
    expect((await spendOf(vk)).reservedUsd).toBe(0);
    expect((await spendOf(vk)).usd).toBeCloseTo(linesCost(5), 12);
    // It asked the member that holds them, with the member's key: the batch it never saw ended, and both outputs.
    const asked = up.calls.slice(before);
    expect(asked.some((c) => c.url.endsWith(`/v1/batches/${batch}`))).toBe(true);
    expect(asked.filter((c) => /\/v1\/files\/[^/]+\/content$/.test(c.url))).toHaveLength(2);
    expect(asked.every((c) => [`Bearer ${KEY_A}`, `Bearer ${KEY_B}`].includes(c.headers.get("authorization") ?? ""))).toBe(true);
    // Its lines are in the ledger once, read by whomever.
    await flushed(vk, 5);
    expect((await usage("mode=batch&by=virtualKey")).rows.find((r) => r.virtualKey === vk.name)).toMatchObject({ requests: 5 });
  });

  it("a batch that may cost more than is left is 402 and never made", async () => {
    const up = batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"], budget: 0.000001 });
    const { made } = await openaiJob(vk, 50);
    expect(made.status).toBe(402);
    expect((await errorOf(made)).message).toMatch(/this batch may cost up to/);
    expect(up.calls.filter((c) => c.url.endsWith("/v1/batches"))).toHaveLength(0);
  });
});

// Last: it drops the table this isolate's writers believe exists.
describe("a ledger made before batch_usage existed", () => {
  it("is still read: its rows are all synchronous", async () => {
    const now = Date.now();
    const row = { minute: now - (now % 60_000), key: "openai:gpt-4o-mini:0000000000000000", caller: "", virtualKey: "", pool: "", model: "gpt-4o-mini", tier: "standard", requests: 2, unknown: 0, unpriced: 0, input: 7, output: 3, cached: 0, cacheWrite: 0, costUsd: 0.5 };
    await writeRows(env.LEDGER!, [row], crypto.randomUUID(), now);
    await env.LEDGER!.exec("DROP TABLE IF EXISTS batch_usage");
    const res = await admin("/admin/usage?by=mode");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rows: { mode: string; requests: number }[] };
    expect(body.rows.map((r) => [r.mode, r.requests])).toEqual([["sync", 2]]);
    expect((await (await admin("/admin/usage?mode=batch")).json()) as object).toMatchObject({ rows: [] });
  });
});
