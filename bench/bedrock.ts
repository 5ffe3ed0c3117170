// One request with the AWS SDK's Bedrock runtime client for a bench client (bench/client.ts,
// `sdk: "bedrock"`), built as docs/providers.md shows it: the gateway's `/bedrock/<region>` as its
// endpoint, the virtual key as its bearer token; Converse, or on its turn ConverseStream read to
// its end. Loaded only by the processes that run it.
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import type { Answer } from "./aisdk.ts";

export interface BedrockSpec {
  /** The gateway's `/bedrock/<region>` (the region is the path's last segment). */
  baseURL: string;
  apiKey: string;
  model: string;
  maxRetries: number;
  maxTokens: number;
}

/** A function sending one request (`text`, streamed or not) and telling its status, as the SDK saw it. */
export function bedrockCaller(spec: BedrockSpec): (text: string, stream: boolean) => Promise<Answer> {
  const client = new BedrockRuntimeClient({
    region: spec.baseURL.split("/").at(-1)!,
    endpoint: spec.baseURL,
    token: { token: spec.apiKey },
    authSchemePreference: ["httpBearerAuth"],
    // Its Node default speaks HTTP/2, which a plain http:// gateway does not.
    requestHandler: new NodeHttpHandler({ httpAgent: { keepAlive: true, maxSockets: 256 } }),
    maxAttempts: spec.maxRetries + 1,
  });
  return async (text, stream) => {
    const ask = { modelId: spec.model, messages: [{ role: "user" as const, content: [{ text }] }], inferenceConfig: { maxTokens: spec.maxTokens } };
    try {
      if (!stream) return { status: (await client.send(new ConverseCommand(ask))).$metadata.httpStatusCode ?? 0, headers: undefined };
      const out = await client.send(new ConverseStreamCommand(ask));
      for await (const _ of out.stream!);
      return { status: out.$metadata.httpStatusCode ?? 0, headers: undefined };
    } catch (err) {
      return { status: (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0, headers: undefined };
    }
  };
}
