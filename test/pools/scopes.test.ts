// A virtual key reaches its pool's inference endpoints and nothing of the member's account unless
// it was granted more; it cannot choose its members' limiters either. Each refusal happens before
// anything is sent.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { admin, call, errorOf, mint } from "../support/vk";

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

const FILES = { object: "list", data: [{ id: "file-of-another-team", object: "file", filename: "secret-eval-set.jsonl", purpose: "fine-tune" }] };

describe("what a virtual key may call", () => {
  it("by default nothing of the member's account: files, stored completions, fine-tuning, batches are 403 and never sent", async () => {
    const { calls } = mockUpstream(() => json(FILES));
    const vk = await mint("duo");
    const attempts: [string, string][] = [
      ["GET", "/openai/v1/files"],
      ["GET", "/openai/v1/files/file-of-another-team/content"],
      ["DELETE", "/openai/v1/files/file-of-another-team"],
      ["GET", "/openai/v1/chat/completions"],
      ["GET", "/openai/v1/responses/resp_123"],
      ["POST", "/openai/v1/fine_tuning/jobs"],
      ["POST", "/openai/v1/batches"],
      ["GET", "/openai/v1/organization/users"],
      ["DELETE", "/openai/v1/models/ft:gpt-4o-mini:org::abc"],
    ];
    for (const [method, path] of attempts) {
      const res = await call(vk.key, { method, path });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.headers.get("x-slotgate-error")).toBe("forbidden");
      const err = await errorOf(res);
      expect(err.message).toContain(vk.name);
      expect(err.message).toMatch(/needs the scope (files|stored|fine_tuning|batches|all)/);
    }
    expect(calls).toHaveLength(0);
  });

  it("inference and the models list go through", async () => {
    const { calls } = mockUpstream((req) => (req.method === "GET" ? json({ object: "list", data: [] }) : json(CHAT)));
    const vk = await mint("duo");
    expect((await call(vk.key)).status).toBe(200);
    expect((await call(vk.key, { path: "/openai/v1/embeddings", body: { model: "text-embedding-3-small", input: "x" } })).status).toBe(200);
    expect((await call(vk.key, { method: "GET", path: "/openai/v1/models" })).status).toBe(200);
    expect(calls.map((c) => new URL(c.url).pathname)).toEqual(["/v1/chat/completions", "/v1/embeddings", "/v1/models"]);
  });

  it("a scope granted at minting opens its group and only that; the list shows the scopes", async () => {
    const { calls } = mockUpstream(() => json(FILES));
    const vk = await mint("duo", { scopes: ["inference", "fine_tuning"] });
    expect(vk.scopes).toEqual(["inference", "fine_tuning"]);
    expect((await call(vk.key, { method: "GET", path: "/openai/v1/fine_tuning/jobs" })).status).toBe(200);
    expect((await call(vk.key, { method: "POST", path: "/openai/v1/batches", body: {} })).status).toBe(403);
    // Not granted: the models list is a scope of its own.
    expect((await call(vk.key, { method: "GET", path: "/openai/v1/models" })).status).toBe(403);
    expect(calls).toHaveLength(1);
    const list = (await (await admin("/admin/virtual-keys")).json()) as { virtualKeys: { name: string; scopes: string[] }[] };
    expect(list.virtualKeys.find((k) => k.name === vk.name)?.scopes).toEqual(["inference", "fine_tuning"]);
  });

  it("Anthropic: messages and token counts, not batches or files", async () => {
    const { calls } = mockUpstream(() => json({ id: "msg_1", type: "message", content: [] }));
    const vk = await mint("claude");
    const ant = (method: string, path: string) => call(vk.key, { method, path, headers: { authorization: "", "x-api-key": vk.key, "anthropic-version": "2023-06-01" }, body: { model: "claude-haiku-4-5", max_tokens: 8, messages: [] } });
    expect((await ant("POST", "/anthropic/v1/messages")).status).toBe(200);
    expect((await ant("POST", "/anthropic/v1/messages/count_tokens")).status).toBe(200);
    expect((await ant("GET", "/anthropic/v1/messages/batches")).status).toBe(403);
    expect((await ant("POST", "/anthropic/v1/messages/batches")).status).toBe(403);
    expect(calls).toHaveLength(2);
  });

  it("refuses unknown scopes at minting, naming the field", async () => {
    for (const scopes of [["inference", "everything"], [], "files", [1]]) {
      const res = await admin("/admin/virtual-keys", { method: "POST", body: JSON.stringify({ name: `bad-scopes-${Math.random()}`, pool: "duo", scopes }) });
      expect(res.status).toBe(400);
      expect((await errorOf(res)).message).toMatch(/^scopes: /);
    }
  });
});

describe("a virtual key cannot pick its members' limiters", () => {
  it("x-slotgate-limit-key on a pooled request is a 400 and nothing is sent", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const vk = await mint("duo");
    const res = await call(vk.key, { headers: { "x-slotgate-limit-key": "bypass-1" } });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/x-slotgate-limit-key cannot be used with a virtual key/);
    expect(calls).toHaveLength(0);
  });

  it("made-up models make no stored limiter and no Directory row", async () => {
    mockUpstream(async (req) => {
      const { model } = (await req.json()) as { model: string };
      return json({ error: { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: "invalid_request_error", code: "model_not_found" } }, 404);
    });
    const vk = await mint("duo");
    const models = Array.from({ length: 12 }, (_, i) => `made-up-${i}-${Math.random().toString(36).slice(2, 6)}`);
    for (const model of models) expect((await call(vk.key, { model })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 100));
    const keys = (await (await admin("/admin/keys")).json()) as { keys: { model: string }[] };
    expect(keys.keys.filter((k) => k.model.startsWith("made-up-"))).toEqual([]);
    for (const model of models.slice(0, 3)) {
      const key = (await call(vk.key, { model })).headers.get("x-slotgate-key")!;
      expect((await admin(`/admin/keys/${encodeURIComponent(key)}`)).status).toBe(404);
    }
  });
});
