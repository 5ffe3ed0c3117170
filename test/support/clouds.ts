// One Claude model served by three clouds in the workers tests (issue 41, item 6): POOLS with an
// Anthropic member, a Bedrock member (IAM, signed) and a Vertex member (a service account key made
// here), passed to the Worker as vars; the providers' answers in each one's framing (Anthropic's
// server-sent events, Bedrock's event-stream frames by the AWS SDK's own codec); and an upstream
// that answers each member as its provider would, telling which member each call reached.
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { callWith } from "./app";
import { json } from "./upstream";

export const MODEL = "claude-haiku-4-5";
export const BEDROCK_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
export const VERTEX_ID = "claude-haiku-4-5@20251001";
export const ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE";
export const ANTHROPIC_KEY = "sk-ant-cloud-member-0123456789";
export const TOKEN_URI = "https://oauth2.test/token";
export const ACCESS_TOKEN = "ya29.c.cloud-member-token";
const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };

export type Cloud = "ant" | "aws" | "gcp";

/** Which member (or the token endpoint) a forwarded request reached, by its host. */
export function cloudOf(url: string): Cloud | "token" | null {
  const host = new URL(url).host;
  if (host === "api.anthropic.com") return "ant";
  if (host.startsWith("bedrock-runtime.")) return "aws";
  if (host.endsWith("aiplatform.googleapis.com")) return "gcp";
  return url === TOKEN_URI ? "token" : null;
}

/** A service account key file as the Cloud console downloads it, with a key pair made here. */
async function serviceAccountKey(): Promise<string> {
  const alg = { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" };
  const pair = (await crypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
  const der = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const pem = `-----BEGIN PRIVATE KEY-----\n${btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n")}\n-----END PRIVATE KEY-----\n`;
  return JSON.stringify({ type: "service_account", project_id: "my-proj-1", private_key_id: "0123456789abcdef0123456789abcdef01234567", private_key: pem, client_email: "evals@my-proj-1.iam.gserviceaccount.com", token_uri: TOKEN_URI });
}

const ANT = { name: "ant", secret: "CLOUD_ANT" };
const aws = (models: Record<string, string>) => ({ name: "aws", provider: "bedrock", region: "us-east-1", account: "111122223333", secrets: { accessKeyId: "CLOUD_AWS_ID", secretAccessKey: "CLOUD_AWS_SECRET" }, models });
const gcp = (models: Record<string, string>) => ({ name: "gcp", provider: "vertex", project: "my-proj-1", location: "us-east5", secret: "CLOUD_GCP_SA", models });

/**
 * The Worker's vars: `clouds` (the three members, the clouds naming the model by their own ids),
 * `aws` and `gcp` (one member each: a request reaches it for sure), `unpriced` (a Bedrock member
 * whose id for the model has no price), `ledger` (the three under accounts of their own), and the
 * members' secrets.
 */
export async function cloudVars(): Promise<Record<string, unknown>> {
  return {
    POOLS: JSON.stringify({
      clouds: { provider: "anthropic", members: [ANT, aws({ [MODEL]: BEDROCK_ID }), gcp({ [MODEL]: VERTEX_ID })] },
      aws: { provider: "anthropic", members: [aws({ [MODEL]: BEDROCK_ID })] },
      gcp: { provider: "anthropic", members: [gcp({ [MODEL]: VERTEX_ID })] },
      unpriced: { provider: "anthropic", members: [ANT, aws({ [MODEL]: "us.anthropic.claude-haiku-9-v1:0" })] },
      // The same clouds under accounts of their own: limiters no other pool here shares.
      ledger: {
        provider: "anthropic",
        members: [{ ...ANT, secret: "CLOUD_ANT_2" }, { ...aws({ [MODEL]: BEDROCK_ID }), account: "444455556666" }, { ...gcp({ [MODEL]: VERTEX_ID }), project: "my-proj-2" }],
      },
    }),
    CLOUD_ANT: ANTHROPIC_KEY,
    CLOUD_ANT_2: `${ANTHROPIC_KEY}-2`,
    CLOUD_AWS_ID: ACCESS_KEY_ID,
    CLOUD_AWS_SECRET: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    CLOUD_GCP_SA: await serviceAccountKey(),
  };
}

let n = 0;
/** A virtual key of its own for `pool` (storage is shared within a file). */
export async function mintIn(vars: Record<string, unknown>, pool: string, extra: Record<string, unknown> = {}): Promise<{ name: string; key: string }> {
  const res = await callWith("/admin/virtual-keys", { method: "POST", headers: ADMIN, body: JSON.stringify({ name: `cloud-${++n}-${Math.random().toString(36).slice(2, 8)}`, pool, ...extra }) }, vars);
  if (res.status !== 201) throw new Error(`mint ${pool}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** GET an admin path with the vars. */
export const adminGet = (vars: Record<string, unknown>, path: string) => callWith(path, { headers: ADMIN }, vars);

/** What an answer reports: its text, and its usage as Anthropic's fields. */
export interface Said {
  text: string;
  input: number;
  output: number;
}

/** A Claude answer's events (Anthropic's Messages stream), as every cloud's Claude sends them. */
export function claudeEvents(s: Said, model = "claude-haiku-4-5-20251001"): Record<string, unknown>[] {
  const words = s.text.split(/(?<= )/);
  return [
    { type: "message_start", message: { id: "msg_01Cloud", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: s.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    ...words.map((text) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: s.output } },
    { type: "message_stop" },
  ];
}

/** The whole answer: Anthropic's Messages body (InvokeModel and rawPredict answer Claude in it too). */
export const claudeMessage = (s: Said, model = "claude-haiku-4-5-20251001") => ({
  id: "msg_01Cloud", type: "message", role: "assistant", model, content: [{ type: "text", text: s.text }], stop_reason: "end_turn", stop_sequence: null,
  usage: { input_tokens: s.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: s.output },
});

/** Anthropic's and Vertex's stream: server-sent events. */
export const sseOf = (events: Record<string, unknown>[]) => events.map((e) => `event: ${e.type as string}\ndata: ${JSON.stringify(e)}\n\n`).join("");

const codec = new EventStreamCodec((b) => new TextDecoder().decode(b), (s) => new TextEncoder().encode(s));
const str = (value: string) => ({ type: "string" as const, value });
const enc = new TextEncoder();
const b64 = (o: object) => btoa(String.fromCharCode(...enc.encode(JSON.stringify(o))));

/**
 * InvokeModelWithResponseStream's answer (APIReference API_runtime_ResponseStream, PayloadPart):
 * each event base64 in a `chunk` frame, the last with `amazon-bedrock-invocationMetrics`; or, cut
 * after `cutAfter` events, an exception frame (`:exception-type`) with its message.
 */
export function eventStreamOf(events: Record<string, unknown>[], opts: { cutAfter?: number; exception?: string; message?: string } = {}): Uint8Array {
  const cut = opts.cutAfter ?? events.length;
  const last = events.length - 1;
  const frames = events.slice(0, cut).map((e, i) => {
    const usage = (events[0]!.message as { usage: { input_tokens: number } }).usage;
    const out = (events[last - 1]!.usage as { output_tokens: number }).output_tokens;
    const payload = i === last ? { ...e, "amazon-bedrock-invocationMetrics": { inputTokenCount: usage.input_tokens, outputTokenCount: out, invocationLatency: 812, firstByteLatency: 301 } } : e;
    return codec.encode({ headers: { ":event-type": str("chunk"), ":content-type": str("application/json"), ":message-type": str("event") }, body: enc.encode(JSON.stringify({ bytes: b64(payload), p: "abcdefgh" })) });
  });
  if (opts.exception) frames.push(codec.encode({ headers: { ":exception-type": str(opts.exception), ":content-type": str("application/json"), ":message-type": str("exception") }, body: enc.encode(JSON.stringify({ message: opts.message ?? "" })) }));
  const all = new Uint8Array(frames.reduce((k, f) => k + f.length, 0));
  let at = 0;
  for (const f of frames) (all.set(f, at), (at += f.length));
  return all;
}

/** Bedrock's throttling refusal: 429, the type in `x-amzn-errortype`, no rate-limit or retry-after header. */
export const throttled = () =>
  json({ message: "Too many requests, please wait before trying again." }, 429, { "x-amzn-errortype": "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/" });

/**
 * An upstream for the three members: the token endpoint's token, and each member's answer to
 * `said(cloud)` in its own framing, plain or streamed as the request asks (Bedrock's stream path,
 * the others' body); `refuse(cloud)` answers a Response of its own instead.
 */
export function cloudsUpstream(said: (cloud: Cloud) => Said, refuse: (cloud: Cloud, req: Request) => Response | null = () => null) {
  return async (req: Request): Promise<Response> => {
    const cloud = cloudOf(req.url);
    if (cloud === "token") return json({ access_token: ACCESS_TOKEN, expires_in: 3599, token_type: "Bearer" });
    if (cloud === null) return json({ error: "unexpected host" }, 500);
    const refused = refuse(cloud, req);
    if (refused) return refused;
    const s = said(cloud);
    const streams = cloud === "aws" ? req.url.endsWith("/invoke-with-response-stream") : ((await req.clone().json()) as { stream?: boolean }).stream === true;
    if (!streams) return json(claudeMessage(s), 200, cloud === "aws" ? { "x-amzn-bedrock-input-token-count": String(s.input), "x-amzn-bedrock-output-token-count": String(s.output) } : {});
    if (cloud === "aws") return new Response(eventStreamOf(claudeEvents(s)), { headers: { "content-type": "application/vnd.amazon.eventstream", "x-amzn-bedrock-content-type": "application/json" } });
    return new Response(sseOf(claudeEvents(s)), { headers: { "content-type": "text/event-stream; charset=utf-8" } });
  };
}
