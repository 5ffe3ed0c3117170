// Shared by the Bedrock end-to-end files (issue 41): the stand-in's accounts with fresh secrets, a
// gateway whose pools hold Bedrock members (IAM credentials the gateway signs with, one of them
// wrong), and the two clients Bedrock's users have, built exactly as docs/providers.md shows them:
// only the endpoint (base URL) changed, a virtual key or the caller's own Bedrock API key as the
// bearer token.
import AnthropicBedrock from "@anthropic-ai/bedrock-sdk";
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { randomBytes } from "node:crypto";
import { Admin } from "../support/pools.ts";
import { ADMIN_TOKEN, type Stack, useStack } from "./setup.ts";

export const REGION = "us-east-1";
export const ACCOUNT = "111122223333";
export const OTHER_ACCOUNT = "444455556666";
export const THIRD_ACCOUNT = "555566667777";
export const CLAUDE = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
export const LLAMA = "meta.llama3-3-70b-instruct-v1:0";
/** A second Llama, whose quota the operator states in `PROVIDERS` (bedrock-limits.test.ts). */
export const LLAMA_SMALL = "meta.llama3-1-8b-instruct-v1:0";

const hex = (n: number) => randomBytes(n).toString("hex");
/** Fresh per run, so a scan for them finds only what this run leaked. */
export const KEY_A = { accessKeyId: `AKIA${hex(8).toUpperCase()}`, secretAccessKey: `bedrock-secret-a/${hex(16)}` };
export const KEY_B = { accessKeyId: `AKIA${hex(8).toUpperCase()}`, secretAccessKey: `bedrock-secret-b/${hex(16)}` };
export const KEY_C = { accessKeyId: `AKIA${hex(8).toUpperCase()}`, secretAccessKey: `bedrock-secret-c/${hex(16)}` };
/** What the wrong members hold: account B's (or C's) key id with a secret that is not its own. */
export const WRONG_SECRET = `bedrock-wrong-${hex(16)}`;
/** A caller's own Bedrock API key (long-term keys start ABSK). */
export const OWN_API_KEY = `ABSK${Buffer.from(`own-${hex(12)}`).toString("base64")}`;

/** Pool members as `POOLS` takes them; the secrets are the names of the vars below. */
const member = (name: string, account: string, idVar: string, secretVar: string) => ({ name, provider: "bedrock", region: REGION, account, secrets: { accessKeyId: idVar, secretAccessKey: secretVar } });
export const POOLS = {
  aws: { provider: "bedrock", members: [member("aws-a", ACCOUNT, "AWS_KEY_ID_A", "AWS_SECRET_A")] },
  // The wrong member first, so that a router breaking ties by order meets it at once. Members of
  // one account share its limiter key (its quota is the account's), so the right one is another account's.
  "aws-mixed": { provider: "bedrock", members: [member("aws-wrong", OTHER_ACCOUNT, "AWS_KEY_ID_B", "AWS_SECRET_WRONG"), member("aws-a2", ACCOUNT, "AWS_KEY_ID_A", "AWS_SECRET_A")] },
  "aws-broken": { provider: "bedrock", members: [member("aws-only-wrong", THIRD_ACCOUNT, "AWS_KEY_ID_C", "AWS_SECRET_WRONG")] },
};
export const SECRETS = { AWS_KEY_ID_A: KEY_A.accessKeyId, AWS_SECRET_A: KEY_A.secretAccessKey, AWS_KEY_ID_B: KEY_B.accessKeyId, AWS_SECRET_B: KEY_B.secretAccessKey, AWS_KEY_ID_C: KEY_C.accessKeyId, AWS_SECRET_WRONG: WRONG_SECRET };

/** A stack whose gateway reaches the stand-in's Bedrock (each region a path prefix there) and holds the pools above. */
export function useBedrockStack(o: { limits?: Record<string, { rpm?: number; tpm?: number }>; latencyMs?: number; burst?: number; outputTokens?: number; vars?: () => Record<string, string>; quota?: unknown } = {}): Stack {
  return useStack({
    admin: true,
    logLevel: "log", // the info event lines too, for the secret scan
    standin: {
      latencyMs: o.latencyMs ?? 30, streamChunks: 3, outputTokens: o.outputTokens ?? 9, ...(o.burst !== undefined && { burst: o.burst }),
      bedrock: {
        accounts: [{ id: ACCOUNT, keys: [KEY_A], apiKeys: [OWN_API_KEY] }, { id: OTHER_ACCOUNT, keys: [KEY_B], apiKeys: [] }, { id: THIRD_ACCOUNT, keys: [KEY_C], apiKeys: [] }],
        region: REGION, limits: o.limits ?? {}, faults: {}, streamFaults: {},
      },
    },
    // `quota`: what the operator states of the account's quotas (docs/providers.md, "A quota you know").
    providers: (url) => ({ bedrock: { baseUrl: `${url}/bedrock/{resource}`, ...(o.quota !== undefined && { quota: o.quota }) } }),
    vars: () => ({ POOLS: JSON.stringify(POOLS), ...SECRETS, USAGE_FLUSH_MS: "200", POOL_OUT_MS: "60000", ...o.vars?.() }),
  });
}

export const admin = (stack: Stack) => new Admin(stack.gateway.url, ADMIN_TOKEN);

/**
 * The AWS SDK's client, as docs/providers.md shows it: the gateway's `/bedrock/<region>` as its
 * endpoint, the virtual key (or the caller's own Bedrock API key) as its bearer token.
 * `requestHandler`: the SDK's Node default speaks HTTP/2, which a plain `http://` gateway does not.
 */
export const awsVia = (stack: Stack, token: string) =>
  new BedrockRuntimeClient({
    region: REGION,
    endpoint: `${stack.gateway.url}/bedrock/${REGION}`,
    token: { token },
    authSchemePreference: ["httpBearerAuth"],
    requestHandler: new NodeHttpHandler(),
    maxAttempts: 1,
  });

/** Anthropic's Bedrock SDK, as docs/providers.md shows it: `baseURL` the gateway's `/bedrock/<region>`, `apiKey` the bearer token. */
export const anthropicBedrockVia = (stack: Stack, apiKey: string, defaultHeaders?: Record<string, string>) =>
  new AnthropicBedrock({ awsRegion: REGION, baseURL: `${stack.gateway.url}/bedrock/${REGION}`, apiKey, maxRetries: 0, defaultHeaders });

export const USER = [{ role: "user" as const, content: [{ text: "Count these words through the gateway please" }] }];

/** A caught error's name, status, message and the gateway's error header. */
export async function failure(p: Promise<unknown>): Promise<{ name: string; status?: number; message: string; error: string | null; body: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { name: string; message: string; status?: number; $metadata?: { httpStatusCode?: number }; $response?: { headers?: Record<string, string> }; headers?: Headers; error?: unknown };
    const error = err.headers?.get?.("x-slotgate-error") ?? err.$response?.headers?.["x-slotgate-error"] ?? null;
    return { name: err.name, status: err.status ?? err.$metadata?.httpStatusCode, message: err.message, error, body: JSON.stringify(err.error ?? err) };
  }
  throw new Error("expected the call to fail");
}
