// Amazon Bedrock through the Worker with the provider mocked (issue 41): a caller's own Bedrock API
// key passed through to its region's host, keyed by region and model, and its usage read where each
// route reports it (Converse's body, InvokeModel's headers, a stream's event-stream frames).
import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import { json, mockUpstream } from "../support/upstream";
import { converseStream, invokeStream } from "../usage/event-frames-fixtures";

afterEach(() => vi.restoreAllMocks());

const ADMIN = { authorization: "Bearer test-admin-token" };
const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
const LLAMA = "meta.llama3-3-70b-instruct-v1:0";
const USER = [{ role: "user", content: [{ text: "hello" }] }];

const post = (path: string, key: string, body: unknown) =>
  exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
const at = (region: string, model: string, op: string) => `/bedrock/${region}/model/${encodeURIComponent(model)}/${op}`;
const framed = (bytes: Uint8Array) => new Response(bytes, { headers: { "content-type": "application/vnd.amazon.eventstream" } });

/** The ledger's figures for one limiter key, once its `n` answers are written (usage rides each answer's settle or release). */
async function ledgerOf(key: string, n: number, since: number) {
  const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
  await vi.waitFor(() => runInDurableObject(stub, (obj: Limiter) => expect(obj.ledger.pending).toBe(n)));
  await runInDurableObject(stub, (obj: Limiter) => obj.ledger.flush(obj.now()));
  const res = await exports.default.fetch(`http://gateway/admin/usage?since=${since}&by=key`, { headers: ADMIN });
  const rows = ((await res.json()) as { rows: { key: string; requests: number; inputTokens: number; outputTokens: number; cachedTokens: number; costUsd: number; unknownUsage: number }[] }).rows.filter((r) => r.key === key);
  const sum = (f: "requests" | "inputTokens" | "outputTokens" | "cachedTokens" | "costUsd" | "unknownUsage") => rows.reduce((a, r) => a + r[f], 0);
  return { requests: sum("requests"), input: sum("inputTokens"), output: sum("outputTokens"), cached: sum("cachedTokens"), unknown: sum("unknownUsage"), cost: sum("costUsd") };
}

describe("a caller's own Bedrock API key", () => {
  it("goes to its region's host with the path after the region, untouched; the key is bedrock:<region>/<model>:<hash>", async () => {
    const { calls } = mockUpstream(() => json({ output: { message: { role: "assistant", content: [{ text: "hi" }] } }, stopReason: "end_turn", usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } }));
    const res = await post(at("us-east-1", HAIKU, "converse"), "ABSKcGFzcy10aHJvdWdoLTE=", { messages: USER });
    expect(res.status).toBe(200);
    expect(calls[0]!.url).toBe(`https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(HAIKU)}/converse`);
    expect(calls[0]!.headers.get("authorization")).toBe("Bearer ABSKcGFzcy10aHJvdWdoLTE=");
    const key = res.headers.get("x-slotgate-key")!;
    expect(key).toMatch(new RegExp(`^bedrock:us-east-1/${HAIKU.replace(/\./g, "\\.")}:[0-9a-f]{16}$`));
    // Another region of the same key is another limiter; another key of the same region too.
    const west = await post(at("us-west-2", HAIKU, "converse"), "ABSKcGFzcy10aHJvdWdoLTE=", { messages: USER });
    expect(calls[1]!.url).toBe(`https://bedrock-runtime.us-west-2.amazonaws.com/model/${encodeURIComponent(HAIKU)}/converse`);
    expect(west.headers.get("x-slotgate-key")).toBe(key.replace("us-east-1", "us-west-2"));
    const other = await post(at("us-east-1", HAIKU, "converse"), "ABSKb3RoZXI=", { messages: USER });
    expect(other.headers.get("x-slotgate-key")!.split(":").slice(0, 2)).toEqual(key.split(":").slice(0, 2));
    expect(other.headers.get("x-slotgate-key")).not.toBe(key);
  });

  it("a path naming no region, or one leaving the host, is refused before anything is sent", async () => {
    const { calls } = mockUpstream(() => json({}));
    for (const path of [`/bedrock/model/${HAIKU}/converse`, "/bedrock/evil.example.com/model/x/converse", "/bedrock/us-east-1/model/..%2f..%2fx/converse"]) {
      const res = await post(path, "ABSKeA==", { messages: USER });
      expect(res.status, path).toBe(400);
      expect(res.headers.get("x-slotgate-error"), path).toBe("invalid_request");
    }
    expect(calls).toHaveLength(0);
  });

  it("usage as each route reports it: Converse's body, InvokeModel's headers, ConverseStream's and InvokeModelWithResponseStream's frames", async () => {
    const since = Date.now() - 60_000;
    mockUpstream((req) => {
      const op = new URL(req.url).pathname.split("/").at(-1);
      if (op === "converse") return json({ output: { message: { role: "assistant", content: [{ text: "hi" }] } }, usage: { inputTokens: 40, outputTokens: 10, totalTokens: 50, cacheReadInputTokens: 5 } });
      if (op === "invoke") return json({ generation: "hi", prompt_token_count: 11, generation_token_count: 4 }, 200, { "x-amzn-bedrock-input-token-count": "11", "x-amzn-bedrock-output-token-count": "4" });
      if (op === "converse-stream") return framed(converseStream());
      return framed(invokeStream());
    });
    const key = "ABSKdXNhZ2UtMQ==";
    const converse = await post(at("us-east-1", HAIKU, "converse"), key, { messages: USER, inferenceConfig: { maxTokens: 32 } });
    await converse.text();
    const stream = await post(at("us-east-1", HAIKU, "converse-stream"), key, { messages: USER });
    expect(stream.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
    // The frames reach the caller byte for byte.
    expect(new Uint8Array(await stream.arrayBuffer())).toEqual(converseStream());
    const invoked = await post(at("us-east-1", HAIKU, "invoke-with-response-stream"), key, { anthropic_version: "bedrock-2023-05-31", max_tokens: 32, messages: [{ role: "user", content: "hi" }] });
    expect(new Uint8Array(await invoked.arrayBuffer())).toEqual(invokeStream());
    const haiku = await ledgerOf(converse.headers.get("x-slotgate-key")!, 3, since);
    // Converse: 40 + 5 read from the cache, 10 out; ConverseStream's metadata: 30, 7; the invoke stream: 25 + 100 + 20, 12.
    expect(haiku).toMatchObject({ requests: 3, input: 45 + 30 + 145, output: 10 + 7 + 12, cached: 5 + 100, unknown: 0 });
    expect(haiku.cost).toBeGreaterThan(0);

    const llama = await post(at("us-east-1", LLAMA, "invoke"), key, { prompt: "hi", max_gen_len: 16 });
    await llama.text();
    expect(await ledgerOf(llama.headers.get("x-slotgate-key")!, 1, since)).toMatchObject({ requests: 1, input: 11, output: 4, unknown: 0 });
  });
});
