// One request with @anthropic-ai/vertex-sdk for a bench client (bench/client.ts, `sdk: "vertex"`),
// written as its users write it through a gateway (docs/providers.md, Google Vertex AI): the
// gateway's base URL, any project and region (a pool member's replace them), the virtual key as the
// Bearer token of a google-auth-library client; messages.create, or on its turn a stream read to
// its end. Loaded only by the processes that run it.
import AnthropicVertex from "@anthropic-ai/vertex-sdk";
import { OAuth2Client } from "google-auth-library";
import type { AiSdkSpec, Answer } from "./aisdk.ts";

/** A function sending one request (`text`, streamed or not) and telling its status and headers, as the SDK saw them. */
export function vertexCaller(spec: AiSdkSpec): (text: string, stream: boolean) => Promise<Answer> {
  const client = new AnthropicVertex({
    baseURL: spec.baseURL, region: "us-east5", projectId: "any-project", authClient: new OAuth2Client({ credentials: { access_token: spec.apiKey } }),
    maxRetries: spec.maxRetries, timeout: 300_000, defaultHeaders: spec.headers,
  });
  return async (text, stream) => {
    const body = { model: spec.model, max_tokens: spec.maxTokens, messages: [{ role: "user" as const, content: text }] };
    try {
      if (!stream) {
        const { response } = await client.messages.create(body).withResponse();
        return { status: response.status, headers: response.headers };
      }
      const { data, response } = await client.messages.create({ ...body, stream: true }).withResponse();
      for await (const _ of data);
      return { status: response.status, headers: response.headers };
    } catch (err) {
      if (err instanceof AnthropicVertex.APIError) return { status: err.status ?? 0, headers: err.headers as Headers | undefined };
      return { status: 0, headers: undefined };
    }
  };
}
