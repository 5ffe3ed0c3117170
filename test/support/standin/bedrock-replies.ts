// What the stand-in Bedrock answers: InvokeModel bodies in each model family's own shape, Converse's,
// their streams as event-stream frames (written by @smithy/eventstream-codec, CRCs and all), and
// its errors. Shapes: the Bedrock API reference (docs.aws.amazon.com/bedrock/latest/APIReference/:
// API_runtime_InvokeModel, _Converse, _ConverseStream, _ResponseStream, _PayloadPart, _TokenUsage)
// and the model parameter pages of the user guide (model-parameters-anthropic-claude-messages,
// model-parameters-meta, model-parameters-nova).
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { base62, hex } from "./reply.ts";
import type { Reply } from "./reply.ts";

const codec = new EventStreamCodec((b) => Buffer.from(b).toString("utf8"), (s) => new Uint8Array(Buffer.from(s, "utf8")));
const str = (value: string) => ({ type: "string" as const, value });
const json = (o: unknown) => new Uint8Array(Buffer.from(JSON.stringify(o), "utf8"));

export interface BedrockError {
  status: number;
  headers: Record<string, string>;
  body: Record<string, string>;
}

/**
 * An error as bedrock-runtime sends it: its type in `x-amzn-ErrorType` (`<Type>:<namespace>`,
 * e.g. `ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/`, observed in
 * aws-samples/amazon-bedrock-client-for-mac#99, third party) and `{"message"}` in the body; the
 * statuses are the API's (its Smithy model, as @aws-sdk/client-bedrock-runtime carries it).
 */
export function bedrockError(status: number, type: string, message: string, namespace = "bedrock", key = "message"): BedrockError {
  return { status, headers: { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.${namespace}/` }, body: { [key]: message } };
}

/**
 * The throttling refusals' messages, per the limit that refused, as AWS's own knowledge-center
 * article quotes them (repost.aws/knowledge-center/bedrock-throttling-error); no retry-after and
 * no rate-limit header of any kind (the troubleshooting page, userguide/troubleshooting-api-error-codes.html).
 */
export const TOO_MANY_REQUESTS = "Too many requests, please wait before trying again.";
export const TOO_MANY_TOKENS = "Too many tokens, please wait before trying again.";

/**
 * Faults' statuses (the API's model) and messages: ServiceUnavailableException's as observed
 * (third party); the others stand-in wording after the API reference's descriptions.
 */
export const FAULTS: Record<string, [number, string]> = {
  ServiceUnavailableException: [503, "Bedrock is unable to process your request."],
  ModelNotReadyException: [429, "The model specified in the request is not ready to serve inference requests. The AWS SDK will automatically retry the operation up to 5 times."],
  ModelErrorException: [424, "The request failed due to an error while processing the model."],
  ValidationException: [400, "Input validation failed. Check your request parameters and retry the request."],
  InternalServerException: [500, "An internal server error occurred. Retry your request."],
  ModelTimeoutException: [408, "The request took too long to process. Processing time exceeded the model timeout length."],
};

/** The model family an id names (`anthropic`, `meta`, `amazon`, ...), its region and ARN prefixes taken off. */
export function familyOf(model: string): string {
  const id = resourceId(model).replace(/^(us|eu|apac|jp|au|ca|us-gov|global)\./, "");
  return id.split(".")[0] ?? "";
}

/**
 * What a limit is scoped to: the model or inference profile the path names, an ARN's resource id
 * taken out of it (`...:inference-profile/us.anthropic...` is `us.anthropic...`), since a
 * cross-region profile has quotas of its own, apart from the base model's (userguide/quotas.html).
 */
export function resourceId(model: string): string {
  const m = /^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:(?:foundation-model|inference-profile|application-inference-profile|provisioned-model)\/(.+)$/.exec(model);
  return m ? m[1]! : model;
}

/** The usage headers of an InvokeModel answer (every model family). */
export const usageHeaders = (r: Reply, latencyMs: number) => ({
  "x-amzn-bedrock-input-token-count": String(r.inputTokens),
  "x-amzn-bedrock-output-token-count": String(r.outputTokens),
  "x-amzn-bedrock-invocation-latency": String(Math.round(latencyMs)),
});

const anthropicMessage = (r: Reply, content: unknown[], stop: string | null, output: number) => ({
  id: `msg_bdrk_01${base62(22)}`, type: "message", role: "assistant", model: r.model.replace(/^.*anthropic\./, "").replace(/-v\d+:\d+$/, ""),
  content, stop_reason: stop, stop_sequence: null,
  usage: { input_tokens: r.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output },
});

/** InvokeModel's body in the model's own shape. */
export function invokeBody(family: string, r: Reply): unknown {
  const stop = r.truncated ? "max_tokens" : "end_turn";
  if (family === "anthropic") return anthropicMessage(r, [{ type: "text", text: r.text }], stop, r.outputTokens);
  if (family === "meta") return { generation: r.text, prompt_token_count: r.inputTokens, generation_token_count: r.outputTokens, stop_reason: r.truncated ? "length" : "stop" };
  return { output: { message: { role: "assistant", content: [{ text: r.text }] } }, stopReason: stop, usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens, totalTokens: r.inputTokens + r.outputTokens } };
}

/** Converse's body: usage {inputTokens, outputTokens, totalTokens}, metrics {latencyMs}. */
export function converseBody(r: Reply, latencyMs: number): unknown {
  return {
    output: { message: { role: "assistant", content: [{ text: r.text }] } }, stopReason: r.truncated ? "max_tokens" : "end_turn",
    usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens, totalTokens: r.inputTokens + r.outputTokens }, metrics: { latencyMs: Math.round(latencyMs) },
  };
}

/** A stream in frames: `head` first, each delta after its share of the latency, then `tail`. */
export interface FramePlan {
  head: Uint8Array[];
  deltas: Uint8Array[];
  tail: Uint8Array[];
}

/** Padding of random length that Bedrock adds to each event (`p`), so event sizes do not tell the text (observed, third party). */
const pad = () => "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".slice(0, 1 + Math.floor(Math.random() * 40));

export const eventFrame = (type: string, payload: object) =>
  codec.encode({ headers: { ":event-type": str(type), ":content-type": str("application/json"), ":message-type": str("event") }, body: json({ ...payload, p: pad() }) });

export const exceptionFrame = (type: string, message: string) =>
  codec.encode({ headers: { ":exception-type": str(type), ":content-type": str("application/json"), ":message-type": str("exception") }, body: json({ message }) });

const chunk = (event: object) => eventFrame("chunk", { bytes: Buffer.from(JSON.stringify(event), "utf8").toString("base64") });

/** InvokeModelWithResponseStream: the model's own events in `chunk` events, the last with `amazon-bedrock-invocationMetrics`. */
export function invokeStream(family: string, r: Reply, latencyMs: number): FramePlan {
  const metrics = { "amazon-bedrock-invocationMetrics": { inputTokenCount: r.inputTokens, outputTokenCount: r.outputTokens, invocationLatency: Math.round(latencyMs), firstByteLatency: Math.round(latencyMs / (r.pieces.length + 1)) } };
  if (family === "anthropic") {
    const stop = r.truncated ? "max_tokens" : "end_turn";
    return {
      head: [chunk({ type: "message_start", message: anthropicMessage(r, [], null, 1) }), chunk({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })],
      deltas: r.pieces.map((text) => chunk({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
      tail: [
        chunk({ type: "content_block_stop", index: 0 }),
        chunk({ type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: r.outputTokens } }),
        chunk({ type: "message_stop", ...metrics }),
      ],
    };
  }
  // Llama's stream: its generation in pieces, counts and the metrics on the last (model-parameters-meta).
  const last = r.pieces.length - 1;
  return {
    head: [],
    deltas: r.pieces.map((generation, i) =>
      chunk(i < last ? { generation, prompt_token_count: i === 0 ? r.inputTokens : null, generation_token_count: i + 1, stop_reason: null } : { generation, prompt_token_count: null, generation_token_count: r.outputTokens, stop_reason: r.truncated ? "length" : "stop", ...metrics }),
    ),
    tail: [],
  };
}

/** ConverseStream: messageStart, contentBlockDelta..., contentBlockStop, messageStop, metadata (usage and metrics). */
export function converseStream(r: Reply, latencyMs: number): FramePlan {
  return {
    head: [eventFrame("messageStart", { role: "assistant" })],
    deltas: r.pieces.map((text) => eventFrame("contentBlockDelta", { contentBlockIndex: 0, delta: { text } })),
    tail: [
      eventFrame("contentBlockStop", { contentBlockIndex: 0 }),
      eventFrame("messageStop", { stopReason: r.truncated ? "max_tokens" : "end_turn" }),
      eventFrame("metadata", { usage: { inputTokens: r.inputTokens, outputTokens: r.outputTokens, totalTokens: r.inputTokens + r.outputTokens }, metrics: { latencyMs: Math.round(latencyMs) } }),
    ],
  };
}

/** Every answer's request id (x-amzn-RequestId, a UUID). */
export const requestId = () => ({ "x-amzn-requestid": `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}` });
