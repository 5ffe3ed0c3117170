// OpenAI Responses API (POST /v1/responses): the response object and its stream of events.
import type { EndpointResult, SseEvent } from "./dialect.ts";
import { hex } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { ParsedRequest } from "./request.ts";

export function responses(req: ParsedRequest, r: Reply): EndpointResult {
  const id = `resp_${hex(48)}`;
  const itemId = `msg_${hex(48)}`;
  const status = r.truncated ? "incomplete" : "completed";
  const usage = {
    input_tokens: r.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: r.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: r.inputTokens + r.outputTokens,
  };
  const part = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });
  const item = (itemStatus: string, content: unknown[]) => ({
    id: itemId, type: "message", status: itemStatus, content, role: "assistant",
  });
  const finalItem = item(status, [part(r.text)]);
  const response = (st: string, output: unknown[], u: typeof usage | null) => ({
    id,
    object: "response",
    created_at: r.created,
    status: st,
    background: false,
    error: null,
    incomplete_details: st === "incomplete" ? { reason: "max_output_tokens" } : null,
    instructions: req.body.instructions ?? null,
    max_output_tokens: req.maxTokens,
    model: r.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: "default",
    store: true,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: u,
    user: null,
    metadata: {},
  });
  if (!req.stream) return { json: response(status, [finalItem], usage) };

  const ev = (type: string, fields: object): SseEvent => ({ event: type, data: { type, ...fields } });
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  const head = [
    ev("response.created", { response: response("in_progress", [], null) }),
    ev("response.in_progress", { response: response("in_progress", [], null) }),
    ev("response.output_item.added", { output_index: 0, item: item("in_progress", []) }),
    ev("response.content_part.added", { ...at, part: part("") }),
  ];
  const deltas = r.pieces.map((delta) => ev("response.output_text.delta", { ...at, delta, logprobs: [] }));
  const tail = [
    ev("response.output_text.done", { ...at, text: r.text, logprobs: [] }),
    ev("response.content_part.done", { ...at, part: part(r.text) }),
    ev("response.output_item.done", { output_index: 0, item: finalItem }),
    ev(`response.${status}`, { response: response(status, [finalItem], usage) }),
  ];
  let n = 0;
  for (const e of [...head, ...deltas, ...tail]) (e.data as { sequence_number: number }).sequence_number = n++;
  return { stream: { head, deltas, tail } };
}
