// The batches scope is enough to run a batch job and opens nothing else: a key reaches the batches
// and files it made (on the member that holds them), lists only those, uploads only batch input,
// and a second key of the same pool, knowing the ids, gets 403 with nothing sent.
import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { batchUpstream, uploadForm } from "../support/batch-upstream";
import { call, errorOf, KEY_A, KEY_B, mint } from "../support/vk";

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

const upload = (key: string, form: FormData) =>
  exports.default.fetch("http://gateway/openai/v1/files", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
const get = (key: string, path: string) => call(key, { method: "GET", path });
const create = (key: string, fileId: string) => call(key, { path: "/openai/v1/batches", body: { input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" } });

/** One key's job through the gateway: upload, create, look (completed), download. */
async function job(key: string) {
  const file = (await (await upload(key, uploadForm(3))).json()) as { id: string };
  const batch = (await (await create(key, file.id)).json()) as { id: string };
  const done = (await (await get(key, `/openai/v1/batches/${batch.id}`)).json()) as { id: string; output_file_id: string; status: string };
  return { file: file.id, batch: batch.id, output: done.output_file_id, status: done.status };
}

// A job is a dozen calls through the Worker: beside the end-to-end suites on two cores, the first
// (a cold isolate) once took past the default 5 s, and the two after it timed out behind it.
describe("a virtual key with the batches scope", { timeout: 20_000 }, () => {
  it("runs a job end to end on one member: the batch goes where its file is, the output comes from there", async () => {
    const up = batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"] });
    const j = await job(vk.key);
    expect(j.status).toBe("completed");
    const content = await get(vk.key, `/openai/v1/files/${j.output}/content`);
    expect(content.status).toBe(200);
    expect((await content.text()).trim().split("\n")).toHaveLength(3);
    // Upload, create, look and download all went to the one member's account that holds the file.
    const members = new Set(up.calls.map((c) => c.headers.get("authorization")));
    expect(members.size).toBe(1);
    expect([`Bearer ${KEY_A}`, `Bearer ${KEY_B}`]).toContain([...members][0]);
    // Its lists are its own, answered by the gateway (nothing sent).
    const before = up.calls.length;
    const batches = (await (await get(vk.key, "/openai/v1/batches")).json()) as { object: string; data: { id: string }[] };
    const files = (await (await get(vk.key, "/openai/v1/files")).json()) as { data: { id: string }[] };
    expect(batches).toMatchObject({ object: "list", data: [{ id: j.batch }] });
    expect(files.data.map((f) => f.id).sort()).toEqual([j.file, j.output].sort());
    expect(up.calls.length).toBe(before);
  });

  it("a second key of the same pool, knowing every id, reads, downloads, cancels and lists nothing of the first's; nothing is sent", async () => {
    const up = batchUpstream();
    const first = await mint("duo", { scopes: ["batches"] });
    const thief = await mint("duo", { scopes: ["batches"] });
    const j = await job(first.key);
    const before = up.calls.length;
    const tries: [string, string][] = [
      ["GET", `/openai/v1/batches/${j.batch}`],
      ["POST", `/openai/v1/batches/${j.batch}/cancel`],
      ["GET", `/openai/v1/files/${j.output}/content`],
      ["GET", `/openai/v1/files/${j.file}/content`],
      ["GET", `/openai/v1/files/${j.file}`],
      ["DELETE", `/openai/v1/files/${j.file}`],
    ];
    for (const [method, path] of tries) {
      const res = await call(thief.key, { method, path, body: {} });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await errorOf(res)).type).toBe("forbidden");
    }
    // Nor may it start a batch on the first key's file.
    expect((await create(thief.key, j.file)).status).toBe(403);
    expect(((await (await get(thief.key, "/openai/v1/batches")).json()) as { data: unknown[] }).data).toEqual([]);
    expect(((await (await get(thief.key, "/openai/v1/files")).json()) as { data: unknown[] }).data).toEqual([]);
    expect(up.calls.length).toBe(before);
  });

  it("uploads batch input only, deletes nothing; without the scope nothing at all", async () => {
    const up = batchUpstream();
    const vk = await mint("duo", { scopes: ["batches"] });
    const tune = await upload(vk.key, uploadForm(1, "fine-tune"));
    expect(tune.status).toBe(403);
    expect((await errorOf(tune)).message).toMatch(/only batch input/);
    const j = await job(vk.key);
    expect((await call(vk.key, { method: "DELETE", path: `/openai/v1/files/${j.file}` })).status).toBe(403);
    const plain = await mint("duo");
    expect((await upload(plain.key, uploadForm(1))).status).toBe(403);
    expect((await create(plain.key, j.file)).status).toBe(403);
    // The refused uploads were never sent: the one upload upstream is the job's.
    expect(up.calls.filter((c) => c.url.endsWith("/v1/files"))).toHaveLength(1);
  });

  it("the files scope is the key's own files too (issue 33): its list, reads and deletes; another key's files are 403, nothing sent", async () => {
    const up = batchUpstream();
    const owner = await mint("duo", { scopes: ["batches"] });
    const j = await job(owner.key);
    const files = await mint("duo", { scopes: ["files"] });
    const before = up.calls.length;
    // Listed by the gateway: none of the account's (the owner's) files.
    expect(((await (await get(files.key, "/openai/v1/files")).json()) as { data: unknown[] }).data).toEqual([]);
    for (const [method, path] of [["GET", `/openai/v1/files/${j.output}/content`], ["GET", `/openai/v1/files/${j.file}`], ["DELETE", `/openai/v1/files/${j.output}`]] as const) {
      const res = await call(files.key, { method, path });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    // Anthropic's and Gemini's files, and OpenAI's uploads API, are not tracked per key: they need all.
    expect((await call(files.key, { path: "/openai/v1/uploads", body: { filename: "x", purpose: "fine-tune", bytes: 1, mime_type: "text/plain" } })).status).toBe(403);
    expect(up.calls.length).toBe(before);
    // Its own: any purpose, listed, read, deleted.
    const mine = (await (await upload(files.key, uploadForm(1, "fine-tune"))).json()) as { id: string };
    expect(((await (await get(files.key, "/openai/v1/files")).json()) as { data: { id: string }[] }).data.map((f) => f.id)).toEqual([mine.id]);
    expect((await get(files.key, `/openai/v1/files/${mine.id}/content`)).status).toBe(200);
    expect((await call(files.key, { method: "DELETE", path: `/openai/v1/files/${mine.id}` })).status).not.toBe(403);
  });

  it("Anthropic: own message batches only; results_url points back at the gateway", async () => {
    batchUpstream();
    const vk = await mint("claude", { scopes: ["batches"] });
    const thief = await mint("claude", { scopes: ["batches"] });
    const body = { requests: [{ custom_id: "a", params: { model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] } }] };
    const headers = { "x-api-key": vk.key, "anthropic-version": "2023-06-01", "content-type": "application/json" };
    const made = (await (await exports.default.fetch("http://gateway/anthropic/v1/messages/batches", { method: "POST", headers, body: JSON.stringify(body) })).json()) as { id: string; results_url: string };
    expect(made.results_url).toBe(`http://gateway/anthropic/v1/messages/batches/${made.id}/results`);
    const mine = await exports.default.fetch(made.results_url, { headers });
    expect(mine.status).toBe(200);
    const theirs = await exports.default.fetch(made.results_url, { headers: { ...headers, "x-api-key": thief.key } });
    expect(theirs.status).toBe(403);
    const del = await exports.default.fetch(`http://gateway/anthropic/v1/messages/batches/${made.id}`, { method: "DELETE", headers });
    expect(del.status).toBe(403);
  });

  it("Gemini's batches, whose owner the gateway does not track: only a key with the all scope reaches them", async () => {
    const up = batchUpstream();
    const g = (key: string, method: string, path: string) =>
      exports.default.fetch(`http://gateway/gemini${path}`, { method, headers: { "x-goog-api-key": key, "content-type": "application/json" }, body: method === "POST" ? "{}" : undefined });
    const batches = await mint("gem", { scopes: ["batches"] });
    for (const [method, path] of [["GET", "/v1beta/batches"], ["GET", "/v1beta/batches/123"], ["POST", "/v1beta/models/gemini-2.5-flash:batchGenerateContent"]] as const) {
      const res = await g(batches.key, method, path);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await errorOf(res)).message).toMatch(/needs the scope all/);
    }
    expect(up.calls).toHaveLength(0);
    const all = await mint("gem", { scopes: ["all"] });
    expect((await g(all.key, "GET", "/v1beta/batches")).status).toBe(404);
    expect(up.calls).toHaveLength(1);
  });
});
