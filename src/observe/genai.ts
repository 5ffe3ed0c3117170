// The OpenTelemetry GenAI semantic conventions' names for what the gateway sees: the operation a
// request is, the provider as the conventions name it, and what an answer says of itself (model,
// id, finish reasons; never its content). Pure; the spans (otel.ts) and the metrics read them.
import { EMBEDDINGS } from "../policy/estimate";
import { GENAI_NAMES } from "../providers/table";

/** `gen_ai.operation.name` of a request: the inference endpoints' (POST); null: not a GenAI operation. */
export function operationOf(method: string, rest: string): string | null {
  if (method !== "POST") return null;
  // OpenAI-style chat completions and Responses, Anthropic's messages: chat.
  if (/\/chat\/completions$|\/v1\/messages$|\/responses$/.test(rest)) return "chat";
  if (/\/completions$|\/v1\/complete$/.test(rest)) return "text_completion";
  if (EMBEDDINGS.test(rest)) return "embeddings";
  if (/:(streamG|g)enerateContent$/.test(rest)) return "generate_content";
  return null;
}

/** `gen_ai.provider.name`: the conventions' well-known value for a built-in provider (its row's), else its own name. */
export const providerName = (name: string): string => (Object.hasOwn(GENAI_NAMES, name) ? GENAI_NAMES[name]! : name);

export interface AnswerFacts {
  model?: string;
  id?: string;
  finish?: string[];
}

const str = (v: unknown) => (typeof v === "string" && v !== "" ? v.slice(0, 256) : undefined);

/**
 * Notes what one parsed answer (or stream event) says of itself into `f`: OpenAI's `model`, `id`
 * and choices' `finish_reason`; Anthropic's `message` (a stream's first event) and `stop_reason`
 * (its `message_delta`); Gemini's `modelVersion`, `responseId` and candidates' `finishReason`;
 * the Responses API's `response`. Later events fill what earlier ones left out.
 */
export function noteAnswer(f: AnswerFacts, json: unknown): void {
  if (typeof json !== "object" || json === null) return;
  const o = json as Record<string, any>;
  const m = (o.message ?? o.response ?? o) as Record<string, unknown>;
  f.model ??= str(m.model) ?? str(o.modelVersion);
  f.id ??= str(m.id) ?? str(o.responseId);
  const reasons = [m.stop_reason, o.delta?.stop_reason, ...[...(Array.isArray(o.choices) ? o.choices : []), ...(Array.isArray(o.candidates) ? o.candidates : [])].map((c) => c?.finish_reason ?? c?.finishReason)]
    .map(str)
    .filter((r): r is string => !!r);
  if (reasons.length) f.finish = reasons.slice(0, 16);
}
