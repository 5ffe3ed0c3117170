// Chat completions as every OpenAI-style API answers them (OpenAI, Azure, Groq, Mistral, OpenRouter,
// DeepSeek, Together, Fireworks, xAI, Gemini's OpenAI route), each with its own usage fields and
// where a stream carries its usage: a provider's differences are a ChatStyle, the shape is shared.
import type { EndpointResult, SseEvent } from "./dialect.ts";
import { base62 } from "./reply.ts";
import type { Reply } from "./reply.ts";
import type { ParsedRequest } from "./request.ts";

export interface ChatStyle {
  /** Fields of `usage` beyond the three counts (OpenAI's details, DeepSeek's cache hits, OpenRouter's cost). */
  usageExtra?: (r: Reply) => object;
  /**
   * Whether a stream reports usage without being asked (`stream_options.include_usage`): in the
   * last chunk (OpenRouter, Mistral), or in a field of its own (Groq's `x_groq.usage`).
   */
  streamUsage: "asked" | "always" | "x_groq";
  /** Fields every chunk and answer carries (OpenAI's system_fingerprint and service_tier). */
  common?: object;
  /** The id's prefix (`chatcmpl-`; Gemini's OpenAI route has none of its own). */
  idPrefix?: string;
}

export const OPENAI_STYLE: ChatStyle = {
  streamUsage: "asked",
  common: { service_tier: "default", system_fingerprint: "fp_standin01" },
  usageExtra: () => ({
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  }),
};

/** Whether a streamed chat completion in this style reports its usage (what the stand-in counts as served). */
export const chatStreamReportsUsage = (style: ChatStyle, req: ParsedRequest) => style.streamUsage !== "asked" || req.includeUsage;

export function chatCompletions(style: ChatStyle) {
  return (req: ParsedRequest, r: Reply): EndpointResult => {
    const id = `${style.idPrefix ?? "chatcmpl-"}${base62(29)}`;
    const finish = r.truncated ? "length" : "stop";
    const usage = {
      prompt_tokens: r.inputTokens,
      completion_tokens: r.outputTokens,
      total_tokens: r.inputTokens + r.outputTokens,
      ...style.usageExtra?.(r),
    };
    const common = { id, created: r.created, model: r.model, ...style.common };
    if (!req.stream) {
      const message = { role: "assistant", content: r.text, refusal: null, annotations: [] };
      const choices = Array.from({ length: r.choices }, (_, index) => ({ index, message, logprobs: null, finish_reason: finish }));
      return { json: { ...common, object: "chat.completion", choices, usage } };
    }
    const asked = req.includeUsage;
    const chunk = (choices: unknown[], extra: object = {}): SseEvent => ({
      data: { ...common, object: "chat.completion.chunk", choices, ...(asked ? { usage: null } : {}), ...extra },
    });
    // Each chunk carries one answer's delta, the answers' chunks in turn (n > 1: each by its index);
    // `extra` goes on the last answer's.
    const each = (delta: object, finishReason: string | null = null, extra: object = {}) =>
      Array.from({ length: r.choices }, (_, index) => chunk([{ index, delta, logprobs: null, finish_reason: finishReason }], index === r.choices - 1 ? extra : {}));
    // The chunk that ends the answer: Groq puts its usage there under x_groq; OpenRouter and Mistral in `usage` when not asked.
    const last =
      style.streamUsage === "x_groq" ? { x_groq: { id: `req_${base62(26)}`, usage } }
      : style.streamUsage === "always" && !asked ? { usage }
      : {};
    return {
      stream: {
        head: each({ role: "assistant", content: "", refusal: null }),
        deltas: r.pieces.flatMap((p) => each({ content: p })),
        tail: [...each({}, finish, last), ...(asked ? [chunk([], { usage })] : []), { data: "[DONE]" }],
      },
    };
  };
}
