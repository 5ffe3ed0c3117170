// Clients of the stand-in Bedrock, as their users build them with only the endpoint changed.
import AnthropicBedrock from "@anthropic-ai/bedrock-sdk";
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import type { Standin } from "../support/standin/index.ts";

export const ACCOUNT = "111122223333";
/** The stand-in's default account's credentials (AWS's documentation example key). */
export const KEY = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" };
export const API_KEY = "ABSKQmVkcm9ja0FQSUtleS1zdGFuZGluLWV4YW1wbGU=";
export const CLAUDE = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
export const LLAMA = "meta.llama3-3-70b-instruct-v1:0";

/** The base URL that plays `https://bedrock-runtime.<region>.amazonaws.com`. */
export const endpoint = (s: Standin, region = "us-east-1") => `${s.url}/bedrock/${region}`;

/**
 * The AWS SDK's client. `requestHandler`: its Node default speaks HTTP/2, which a plain `http://`
 * endpoint does not (Bedrock's hosts speak it over TLS); the HTTP/1.1 handler is the SDK's own.
 */
export function awsClient(s: Standin, o: { region?: string; credentials?: typeof KEY & { sessionToken?: string }; token?: string } = {}) {
  const region = o.region ?? "us-east-1";
  const auth = o.token !== undefined ? { token: { token: o.token }, authSchemePreference: ["httpBearerAuth"] } : { credentials: o.credentials ?? KEY };
  return new BedrockRuntimeClient({ region, endpoint: endpoint(s, region), maxAttempts: 1, requestHandler: new NodeHttpHandler(), ...auth });
}

export function anthropicBedrock(s: Standin, o: { apiKey?: string; secret?: string } = {}) {
  const base = { awsRegion: "us-east-1", baseURL: endpoint(s), maxRetries: 0 };
  if (o.apiKey !== undefined) return new AnthropicBedrock({ ...base, apiKey: o.apiKey });
  return new AnthropicBedrock({ ...base, apiKey: null, awsAccessKey: KEY.accessKeyId, awsSecretKey: o.secret ?? KEY.secretAccessKey });
}

/** A caught error, for its name, status and message. */
export async function failure(p: Promise<unknown>): Promise<{ name: string; status?: number; message: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { name: string; message: string; status?: number; $metadata?: { httpStatusCode?: number } };
    return { name: err.name, status: err.status ?? err.$metadata?.httpStatusCode, message: err.message };
  }
  throw new Error("expected the call to fail");
}

export const USER = [{ role: "user" as const, content: [{ text: "Count these words for the stand-in please" }] }];
export const anthropicBody = (extra: object = {}) => ({ anthropic_version: "bedrock-2023-05-31", max_tokens: 64, messages: [{ role: "user", content: "Count these words please" }], ...extra });
