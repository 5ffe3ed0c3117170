// A request's JSON body is parsed at most once on its way to the provider (issue 40), whatever
// stages it passes: a virtual key's stored objects and budget, the response cache, a service tier
// written into the body, usage asked of a stream. JSON.parse is watched for the body's own text.
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { mint } from "../support/vk";

afterEach(() => vi.restoreAllMocks());

/** How often JSON.parse was given `text` while `send` ran. */
async function parsesOf(text: string, send: () => Promise<Response>): Promise<{ parses: number; res: Response }> {
  const parse = JSON.parse;
  let parses = 0;
  vi.spyOn(JSON, "parse").mockImplementation((s: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    if (s === text) parses++;
    return parse(s, reviver);
  });
  const res = await send();
  await res.arrayBuffer();
  vi.mocked(JSON.parse).mockRestore();
  return { parses, res };
}

const post = (path: string, headers: Record<string, string>, text: string) =>
  exports.default.fetch(`http://gateway${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text });

describe("one parse of the body", () => {
  it("a caller's own key, with the cache on, a flex tier written into the body and a stream asked for its usage", async () => {
    const { calls } = mockUpstream(() => json({ ...CHAT, model: "gpt-5-mini", service_tier: "flex", usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } }));
    const text = JSON.stringify({ model: "gpt-5-mini", messages: [{ role: "user", content: "parse me once" }], max_completion_tokens: 16 });
    const h = { authorization: "Bearer sk-parse-once-1", "x-slotgate-cache": "on", "x-slotgate-tier": "flex" };
    const { parses, res } = await parsesOf(text, () => post("/openai/v1/chat/completions", h, text));
    expect(res.status).toBe(200);
    expect(JSON.parse(calls[0]!.body).service_tier).toBe("flex");
    expect(parses).toBe(1);
    const streamed = JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "a stream" }] });
    mockUpstream(() => new Response('data: {"id":"c","object":"chat.completion.chunk","choices":[]}\n\ndata: [DONE]\n\n', { headers: { "content-type": "text/event-stream" } }));
    expect((await parsesOf(streamed, () => post("/openai/v1/chat/completions", { authorization: "Bearer sk-parse-once-2" }, streamed))).parses).toBe(1);
  });

  it("a budgeted virtual key's request naming a stored response: stored objects, budget, pool route and cache read one parse", async () => {
    mockUpstream(() => json({ id: "resp_1", object: "response", output: [], usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10 } }));
    const vk = await mint("duo", { budget: 5, scopes: ["inference", "stored"] });
    const text = JSON.stringify({ model: "gpt-4o-mini", input: "go on", previous_response_id: "resp_other", max_output_tokens: 16 });
    const { parses, res } = await parsesOf(text, () => post("/openai/v1/responses", { authorization: `Bearer ${vk.key}`, "x-slotgate-cache": "on" }, text));
    expect(res.status).toBe(200);
    expect(parses).toBe(1);
  });
});
