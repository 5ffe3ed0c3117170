// A virtual key reaches the account's stored objects only if it made them (issue 33): a response
// it did not make cannot be continued, a file it did not upload cannot be read into a prompt, and
// what only the account has (vector stores, containers, Anthropic's and Gemini's files) needs all.
// Nothing refused is sent. What it made goes to the member that holds it.
import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { refsIn } from "../../src/stored/refs";
import { json, mockUpstream } from "../support/upstream";
import { call, errorOf, mint, memberOf } from "../support/vk";

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

describe("what a body names of the account", () => {
  it("reads the providers' id fields wherever they are nested, and only ids", () => {
    const responses = {
      model: "gpt-4o-mini", previous_response_id: "resp_1", prompt: { id: "pmpt_1" }, conversation: "conv_1",
      input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }, { type: "input_image", file_id: "file-2" }] }, { type: "item_reference", id: "msg_9" }],
      tools: [{ type: "file_search", vector_store_ids: ["vs_1", "vs_2"] }, { type: "code_interpreter", container: "cntr_1" },
        { type: "function", name: "f", parameters: { type: "object", properties: { file_id: { type: "string" } } } }],
    };
    expect(refsIn(responses).map((r) => `${r.kind}:${r.id}`).sort()).toEqual(
      ["container:cntr_1", "conversation:conv_1", "file:file-1", "file:file-2", "item:msg_9", "prompt:pmpt_1", "response:resp_1", "vector_store:vs_1", "vector_store:vs_2"].sort(),
    );
    expect(refsIn({ model: "m", messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-3" } }] }] })).toEqual([{ kind: "file", id: "file-3" }]);
    expect(refsIn({ model: "c", container: "container_1", messages: [{ role: "user", content: [{ type: "document", source: { type: "file", file_id: "file_011" } }] }] }))
      .toEqual([{ kind: "container", id: "container_1" }, { kind: "file", id: "file_011" }]);
    expect(refsIn({ cachedContent: "cachedContents/x", contents: [{ parts: [{ fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/abc" } }, { fileData: { fileUri: "https://example.com/a.pdf" } }] }] }))
      .toEqual([{ kind: "cached_content", id: "cachedContents/x" }, { kind: "file", id: "https://generativelanguage.googleapis.com/v1beta/files/abc" }]);
    // A completion's prompt is text; a plain chat names nothing.
    expect(refsIn({ model: "m", prompt: "file_id: resp_1" })).toEqual([]);
    expect(refsIn({ model: "m", messages: [{ role: "user", content: "previous_response_id resp_1" }] })).toEqual([]);
  });
});

describe("a virtual key and the account's stored objects", () => {
  /** Answers a Responses create with a numbered response, from whichever member got it. */
  function responses() {
    return mockUpstream(async (req, n) => json({ id: `resp_${n}${memberOf(req.headers)}`, object: "response", model: "gpt-4o-mini", output: [], usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }));
  }
  const respond = (key: string, body: Record<string, unknown>) => call(key, { path: "/openai/v1/responses", body: { model: "gpt-4o-mini", input: "hi", ...body } });

  it("continues only its own responses, on the member that stored them; another key's is 403 and never sent", async () => {
    const { calls } = responses();
    const owner = await mint("duo");
    const thief = await mint("duo");
    const first = (await (await respond(owner.key, {})).json()) as { id: string };
    const member = first.id.slice(-1);
    const refused = await respond(thief.key, { previous_response_id: first.id });
    expect(refused.status).toBe(403);
    expect((await errorOf(refused)).message).toMatch(/did not make the response/);
    expect(calls).toHaveLength(1);
    // The owner's follow-ups all go where the response is stored.
    for (let i = 0; i < 6; i++) {
      const next = await respond(owner.key, { previous_response_id: first.id });
      expect(next.status).toBe(200);
      await next.text();
    }
    expect(calls.slice(1).map((c) => memberOf(c.headers))).toEqual(Array(6).fill(member));
    // The stored scope reaches the account's stored responses.
    const stored = await mint("duo", { scopes: ["inference", "stored"] });
    expect((await respond(stored.key, { previous_response_id: first.id })).status).toBe(200);
  });

  it("a file, vector store or container it did not make is 403, in every provider's shape; all reaches them", async () => {
    const { calls } = mockUpstream(() => json({ id: "x", object: "response", output: [], usage: { input_tokens: 1, output_tokens: 1 } }));
    const vk = await mint("duo");
    for (const body of [
      { input: [{ role: "user", content: [{ type: "input_file", file_id: "file-someone-elses" }] }] },
      { tools: [{ type: "file_search", vector_store_ids: ["vs_account"] }] },
      { tools: [{ type: "code_interpreter", container: "cntr_account" }] },
    ])
      expect((await respond(vk.key, body)).status, JSON.stringify(body)).toBe(403);
    const chat = await call(vk.key, { body: { model: "gpt-4o-mini", messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-someone-elses" } }] }] } });
    expect(chat.status).toBe(403);
    const claude = await mint("claude");
    const ant = await exports.default.fetch("http://gateway/anthropic/v1/messages", {
      method: "POST", headers: { "x-api-key": claude.key, "anthropic-version": "2023-06-01", "anthropic-beta": "files-api-2025-04-14", "content-type": "application/json" },
      body: JSON.stringify({ model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: [{ type: "document", source: { type: "file", file_id: "file_011account" } }] }] }),
    });
    expect(ant.status).toBe(403);
    const gem = await mint("gem");
    const g = await exports.default.fetch("http://gateway/gemini/v1beta/models/gemini-2.5-flash:generateContent", {
      method: "POST", headers: { "x-goog-api-key": gem.key, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ parts: [{ fileData: { fileUri: "https://generativelanguage.googleapis.com/v1beta/files/account-video" } }] }] }),
    });
    expect(g.status).toBe(403);
    expect(calls).toHaveLength(0);
    const all = await mint("duo", { scopes: ["all"] });
    expect((await respond(all.key, { tools: [{ type: "file_search", vector_store_ids: ["vs_account"] }] })).status).toBe(200);
    expect(calls).toHaveLength(1);
  });

  it("a file it uploaded itself may be named, and the request goes to the member that holds it", async () => {
    let n = 0;
    const { calls } = mockUpstream(async (req) => {
      if (new URL(req.url).pathname === "/v1/files") return json({ id: `file-own-${++n}`, object: "file", purpose: "user_data", bytes: 1, created_at: 1, filename: "a.pdf" });
      return json({ id: "resp_z", object: "response", output: [], usage: { input_tokens: 1, output_tokens: 1 } });
    });
    const vk = await mint("duo", { scopes: ["inference", "files"] });
    const form = new FormData();
    form.append("purpose", "user_data");
    form.append("file", new File(["%PDF"], "a.pdf"));
    const up = (await (await exports.default.fetch("http://gateway/openai/v1/files", { method: "POST", headers: { authorization: `Bearer ${vk.key}` }, body: form })).json()) as { id: string };
    const holder = memberOf(calls[0]!.headers);
    for (let i = 0; i < 4; i++) expect((await respond(vk.key, { store: false, input: [{ role: "user", content: [{ type: "input_file", file_id: up.id }] }] })).status).toBe(200);
    expect(calls.slice(1).map((c) => memberOf(c.headers))).toEqual(Array(4).fill(holder));
  });
});
