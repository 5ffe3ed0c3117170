// The stand-in's answers parse with the official SDKs, plain and streamed, for both providers.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  anHeaders, anthropicClient, chatBody, messagesBody, oaHeaders, openaiClient, post, readSse, standin,
} from "./standin-helpers.ts";

describe("stand-in: OpenAI shapes", () => {
  it("chat completion, plain: the SDK parses it and the model is echoed", async () => {
    const s = await standin({ outputTokens: 6 });
    const { data, response } = await openaiClient(s).chat.completions.create(chatBody()).withResponse();
    expect(data.id).toMatch(/^chatcmpl-/);
    expect(data.object).toBe("chat.completion");
    expect(data.model).toBe("gpt-4o-mini");
    expect(data.choices[0]!.message.role).toBe("assistant");
    expect(data.choices[0]!.message.content!.split(" ")).toHaveLength(6);
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(data.usage!.completion_tokens).toBe(6);
    expect(data.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + 6);
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  });

  it("models: the SDK's models.list() and retrieve() parse them; an account's own list; an unknown model is model_not_found; no key is 401", async () => {
    const s = await standin();
    const client = openaiClient(s);
    const listed = [];
    for await (const m of client.models.list()) listed.push(m);
    expect(listed.map((m) => m.id)).toContain("gpt-4o-mini");
    for (const m of listed) expect(m).toEqual({ id: m.id, object: "model", created: expect.any(Number), owned_by: expect.any(String) });
    expect(await client.models.retrieve("any-model-at-all")).toMatchObject({ id: "any-model-at-all", object: "model" });

    s.configure({ models: ["gpt-4o-mini", "gpt-4o"] });
    const own = await client.models.list();
    expect(own.data.map((m) => m.id)).toEqual(["gpt-4o-mini", "gpt-4o"]);
    const missing = await client.models.retrieve("gpt-3").then(() => null, (e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");

    const anonymous = await fetch(`${s.url}/v1/models`);
    expect(anonymous.status).toBe(401);
  });

  it("max_tokens below the reply cuts it with finish_reason length", async () => {
    const s = await standin({ outputTokens: 10 });
    const data = await openaiClient(s).chat.completions.create(chatBody({ max_completion_tokens: 3 }));
    expect(data.choices[0]!.finish_reason).toBe("length");
    expect(data.usage!.completion_tokens).toBe(3);
  });

  it("chat completion, streamed with include_usage: deltas join to the text, usage comes last", async () => {
    const s = await standin({ outputTokens: 8, streamChunks: 4 });
    const stream = await openaiClient(s).chat.completions.create(
      chatBody({ stream: true, stream_options: { include_usage: true } }),
    );
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "gpt-4o-mini")).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text.split(" ")).toHaveLength(8);
    expect(chunks.filter((c) => c.choices[0]?.finish_reason === "stop")).toHaveLength(1);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 8 });
  });

  it("n answers, plain and streamed: the SDK sees n choices, usage counts every answer's tokens", async () => {
    const s = await standin({ echo: true });
    const plain = await openaiClient(s).chat.completions.create(chatBody({ n: 3 }));
    expect(plain.choices.map((c) => [c.index, c.message.content])).toEqual([0, 1, 2].map((i) => [i, "Say hello to the test suite"]));
    expect(plain.usage!.completion_tokens).toBe(3 * 6);
    const final = await openaiClient(s).chat.completions.stream(chatBody({ n: 2, stream_options: { include_usage: true } })).finalChatCompletion();
    expect(final.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([[0, "Say hello to the test suite", "stop"], [1, "Say hello to the test suite", "stop"]]);
    expect(final.usage!.completion_tokens).toBe(2 * 6);
  });

  it("chat stream helper accumulates the final completion; raw SSE ends with [DONE]", async () => {
    const s = await standin({ echo: true });
    const runner = openaiClient(s).chat.completions.stream(chatBody());
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe("Say hello to the test suite");
    const events = await readSse(await post(s, "/v1/chat/completions", chatBody({ stream: true }), oaHeaders()));
    expect(events.at(-1)![1]).toBe("[DONE]");
    expect(events.every(([name]) => name === null)).toBe(true);
    expect((events[0]![1] as { usage?: unknown }).usage).toBeUndefined();
  });

  it("Responses API, plain and through the SDK's stream accumulator", async () => {
    const s = await standin({ echo: true });
    const client = openaiClient(s);
    const plain = await client.responses.create({ model: "gpt-4.1-mini", input: "echo these words" });
    expect(plain.id).toMatch(/^resp_/);
    expect(plain.status).toBe("completed");
    expect(plain.model).toBe("gpt-4.1-mini");
    expect(plain.output_text).toBe("echo these words");
    expect(plain.usage!.output_tokens).toBe(3);

    const stream = client.responses.stream({ model: "gpt-4.1-mini", input: "streamed words here too" });
    const deltas: string[] = [];
    stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe("streamed words here too");
    expect(deltas.join("")).toBe("streamed words here too");
  });

  it("Responses API stream has the real event sequence with sequence numbers", async () => {
    const s = await standin({ streamChunks: 2 });
    const res = await post(s, "/v1/responses", { model: "gpt-4.1-mini", input: "hi", stream: true }, oaHeaders());
    const events = await readSse(res);
    expect(events.map(([name]) => name)).toEqual([
      "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
      "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
      "response.content_part.done", "response.output_item.done", "response.completed",
    ]);
    expect(events.map(([, d]) => (d as { sequence_number: number }).sequence_number)).toEqual([...Array(10).keys()]);
    expect(events.every(([name, d]) => (d as { type: string }).type === name)).toBe(true);
  });

  it("embeddings: the SDK's default base64 decodes to vectors, float arrays on request", async () => {
    const s = await standin();
    const res = await openaiClient(s).embeddings.create({ model: "text-embedding-3-small", input: ["a", "b"] });
    expect(res.object).toBe("list");
    expect(res.data).toHaveLength(2);
    expect(res.data[0]!.embedding).toHaveLength(16);
    expect(Math.hypot(...res.data[0]!.embedding)).toBeCloseTo(1, 4);
    const raw = await post(s, "/v1/embeddings", { model: "m", input: ["a"], encoding_format: "float" }, oaHeaders());
    const body = (await raw.json()) as { data: { embedding: number[] }[] };
    expect(body.data[0]!.embedding).toHaveLength(16);
    body.data[0]!.embedding.forEach((x, i) => expect(x).toBeCloseTo(res.data[0]!.embedding[i]!, 6));
    const small = await post(s, "/v1/embeddings", { model: "m", input: "a", dimensions: 4 }, oaHeaders());
    expect(((await small.json()) as { data: { embedding: number[] }[] }).data[0]!.embedding).toHaveLength(4);
  });
});

describe("stand-in: Anthropic shapes", () => {
  it("message, plain: content blocks, stop_reason, usage, request-id", async () => {
    const s = await standin({ outputTokens: 5 });
    const { data, response } = await anthropicClient(s).messages.create(messagesBody()).withResponse();
    expect(data.id).toMatch(/^msg_01/);
    expect(data.type).toBe("message");
    expect(data.model).toBe("claude-haiku-4-5");
    expect(data.content).toHaveLength(1);
    expect(data.content[0]!.type).toBe("text");
    expect(data.stop_reason).toBe("end_turn");
    expect(data.usage.output_tokens).toBe(5);
    expect(response.headers.get("request-id")).toMatch(/^req_011C\w{20}$/);
  });

  it("a picture counts what Anthropic counts a 1024 x 1024 one (width x height / 750), inline or by URL; OpenAI's 765", async () => {
    const s = await standin();
    const picture = { type: "image" as const, source: { type: "url" as const, url: "https://example.com/a.png" } };
    const m = await anthropicClient(s).messages.create(messagesBody({ messages: [{ role: "user" as const, content: [picture, { type: "text" as const, text: "what is it?" }] }] }));
    // The picture and the text around it (its URL's characters count as text).
    expect(m.usage.input_tokens - 1_398).toBeGreaterThan(0);
    expect(m.usage.input_tokens - 1_398).toBeLessThan(20);
    const o = await openaiClient(s).chat.completions.create(chatBody({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }] }] }));
    expect(o.usage!.prompt_tokens - 765).toBeGreaterThan(0);
    expect(o.usage!.prompt_tokens - 765).toBeLessThan(20);
  });

  it("max_tokens cuts the reply with stop_reason max_tokens", async () => {
    const s = await standin({ outputTokens: 20 });
    const data = await anthropicClient(s).messages.create(messagesBody({ max_tokens: 4 }));
    expect(data.stop_reason).toBe("max_tokens");
    expect(data.usage.output_tokens).toBe(4);
  });

  it("message, streamed: the SDK's MessageStream accumulates the final message", async () => {
    const s = await standin({ echo: true, streamChunks: 3 });
    const stream = anthropicClient(s).messages.stream(messagesBody());
    const texts: string[] = [];
    stream.on("text", (t) => texts.push(t));
    const final = await stream.finalMessage();
    expect(texts).toHaveLength(3);
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: "text", text: "Say hello to the test suite" });
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage.output_tokens).toBe(6);
  });

  it("raw stream has Anthropic's event sequence with event: lines", async () => {
    const s = await standin({ streamChunks: 2 });
    const events = await readSse(await post(s, "/v1/messages", messagesBody({ stream: true }), anHeaders()));
    expect(events.map(([name]) => name)).toEqual([
      "message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta",
      "content_block_stop", "message_delta", "message_stop",
    ]);
    expect(events.every(([name, d]) => (d as { type: string }).type === name)).toBe(true);
  });

  it("anthropic-version and max_tokens are required, as on the real API", async () => {
    const s = await standin();
    const noVersion = await post(s, "/v1/messages", messagesBody(), { "x-api-key": "k" });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    const noMax = await post(s, "/v1/messages", { model: "m", messages: [] }, anHeaders());
    expect(((await noMax.json()) as { error: { message: string } }).error.message).toBe("max_tokens: Field required");
  });
});

describe("stand-in: streams are paced over the latency", () => {
  it("the first chunk arrives well before the last is written", async () => {
    const s = await standin({ latencyMs: 400, streamChunks: 4 });
    for (const [path, body, headers] of [
      ["/v1/chat/completions", chatBody({ stream: true }), oaHeaders()],
      ["/v1/messages", messagesBody({ stream: true }), anHeaders()],
    ] as const) {
      const started = Date.now();
      const res = await post(s, path, body, headers);
      const reader = res.body!.getReader();
      await reader.read();
      const first = Date.now() - started;
      while (!(await reader.read()).done);
      const last = Date.now() - started;
      // The chunks are spread out: the last came well after the first (a lower bound: never flaky).
      expect(last - first).toBeGreaterThanOrEqual(200);
    }
  });
});
