// Answers in the providers' real shapes (trimmed text, real field names and nesting).

export const openaiChat = {
  id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", object: "chat.completion", created: 1741570283, model: "gpt-4o-2024-08-06",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello!", refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
  usage: {
    prompt_tokens: 1117, completion_tokens: 46, total_tokens: 1163,
    prompt_tokens_details: { cached_tokens: 1024, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
  service_tier: "default", system_fingerprint: "fp_fc9f1d7035",
};

const chunk = (choices: unknown[], usage: unknown) => ({
  id: "chatcmpl-123", object: "chat.completion.chunk", created: 1694268190, model: "gpt-4o-mini-2024-07-18", system_fingerprint: "fp_44709d6fcb", choices, usage,
});

/** An OpenAI chat stream with `stream_options.include_usage`: usage null on each chunk, then a usage chunk. */
export function openaiStream(withUsage: boolean): string {
  const events = [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }], withUsage ? null : undefined),
    chunk([{ index: 0, delta: { content: "Hello" }, logprobs: null, finish_reason: null }], withUsage ? null : undefined),
    chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }], withUsage ? null : undefined),
  ];
  if (withUsage) events.push(chunk([], { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, prompt_tokens_details: { cached_tokens: 0 } }));
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`;
}

export const anthropicMessage = {
  id: "msg_013Zva2CMHLNnXjNJJKqJ2EF", type: "message", role: "assistant", model: "claude-sonnet-4-20250514",
  content: [{ type: "text", text: "Hi! My name is Claude." }], stop_reason: "end_turn", stop_sequence: null,
  usage: { input_tokens: 2095, cache_creation_input_tokens: 2051, cache_read_input_tokens: 0, output_tokens: 503, service_tier: "standard" },
};

/** Anthropic's event stream: input in message_start, the final output in message_delta. */
export const anthropicStream = [
  ["message_start", { type: "message_start", message: { id: "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", type: "message", role: "assistant", content: [], model: "claude-sonnet-4-20250514", stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 1 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["ping", { type: "ping" }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 15 } }],
  ["message_stop", { type: "message_stop" }],
].map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");

export const geminiAnswer = {
  candidates: [{ content: { parts: [{ text: "Hello" }], role: "model" }, finishReason: "STOP", index: 0 }],
  usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 30, totalTokenCount: 92, cachedContentTokenCount: 4, thoughtsTokenCount: 50, promptTokensDetails: [{ modality: "TEXT", tokenCount: 12 }] },
  modelVersion: "gemini-2.5-flash", responseId: "abc",
};

const geminiChunk = (text: string, candidates: number) => ({
  candidates: [{ content: { parts: [{ text }], role: "model" }, index: 0 }],
  usageMetadata: { promptTokenCount: 8, candidatesTokenCount: candidates, totalTokenCount: 8 + candidates },
  modelVersion: "gemini-2.0-flash",
});

/** `:streamGenerateContent?alt=sse`: each event carries the usage so far. */
export const geminiSse = [geminiChunk("Hel", 1), geminiChunk("lo", 7)].map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("");
/** `:streamGenerateContent` without alt=sse: one JSON array, streamed. */
export const geminiArray = `[${[geminiChunk("Hel", 1), geminiChunk("lo", 7)].map((c) => JSON.stringify(c, null, 2)).join(",\r\n")}]`;

/** OpenAI Responses API stream: the usage is in response.completed. */
export const responsesStream = [
  ["response.created", { type: "response.created", response: { id: "resp_1", status: "in_progress", usage: null } }],
  ["response.output_text.delta", { type: "response.output_text.delta", delta: "Hi" }],
  ["response.completed", { type: "response.completed", response: { id: "resp_1", status: "completed", usage: { input_tokens: 36, input_tokens_details: { cached_tokens: 8 }, output_tokens: 87, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 123 } } }],
].map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");

/** The text or bytes as a stream of `size`-byte chunks (cutting events, frames and UTF-8 characters anywhere). */
export function chunked(data: string | Uint8Array, size: number): ReadableStream<Uint8Array> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}
