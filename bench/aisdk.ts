// One request with the Vercel AI SDK for a bench client (bench/client.ts, `sdk: "aisdk"`), written as
// its users write it: `createOpenAI({ baseURL })` and the provider's default model (`openai(model)`,
// the Responses API), generateText or, on its turn, streamText read to its end. Loaded only by the
// processes that run it, so the other shapes' clients start without the AI SDK.
import { createOpenAI } from "@ai-sdk/openai";
import { APICallError, generateText, streamText } from "ai";

export interface AiSdkSpec {
  baseURL: string;
  apiKey: string;
  model: string;
  maxRetries: number;
  maxTokens: number;
  headers?: Record<string, string>;
}

export type Answer = { status: number; headers: Headers | undefined };

/** A function sending one request (`text`, streamed or not) and telling its status and headers, as the SDK saw them. */
export function aiSdkCaller(spec: AiSdkSpec): (text: string, stream: boolean) => Promise<Answer> {
  const model = createOpenAI({ baseURL: spec.baseURL, apiKey: spec.apiKey })(spec.model);
  const call = { model, maxRetries: spec.maxRetries, maxOutputTokens: spec.maxTokens, headers: spec.headers };
  const ok = (h: Record<string, string> | undefined): Answer => ({ status: 200, headers: new Headers(h) });
  return async (text, stream) => {
    try {
      if (!stream) return ok((await generateText({ ...call, prompt: text })).response.headers);
      // streamText reports an error to onError and ends its stream: the first one is the answer.
      let failed: unknown = null;
      const r = streamText({ ...call, prompt: text, onError: ({ error }) => void (failed ??= error) });
      for await (const _ of r.textStream);
      if (failed) throw failed;
      return ok((await r.response).headers);
    } catch (err) {
      if (APICallError.isInstance(err)) return { status: err.statusCode ?? 0, headers: new Headers(err.responseHeaders) };
      return { status: 0, headers: undefined };
    }
  };
}
