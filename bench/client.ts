// One benchmark client process: the official openai SDK (or plain fetch with `raw`, or the official
// @anthropic-ai/sdk with `sdk: "anthropic"`, AzureOpenAI with `sdk: "azure"`, plain fetch on
// Gemini's native API with `sdk: "gemini"`, the Vercel AI SDK with `sdk: "aisdk"`, @anthropic-ai/vertex-sdk
// with `sdk: "vertex"`, the AWS SDK's Bedrock Converse with `sdk: "bedrock"`) sending chat completions (messages) at a fixed concurrency. Prints "ready", waits for "go" on stdin (so every process
// starts together), then prints one JSON line of results and exits.
// Spawned by bench/fleet.ts: node bench/client.ts '<ClientSpec JSON>'
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { AzureOpenAI } from "openai";
import { createInterface } from "node:readline";

export interface ClientSpec {
  baseURL: string;
  apiKey: string;
  model: string;
  /** Requests to send; ignored when durationMs is set. */
  requests: number;
  /** Keep sending until this long after "go" (throughput runs). */
  durationMs?: number;
  concurrency: number;
  /** The SDK's own retries (its default is 2). */
  maxRetries: number;
  maxTokens: number;
  prompt: string;
  /** Plain fetch instead of the SDK: less client CPU where the server's ceiling is measured. */
  raw?: boolean;
  /**
   * Which client (default the openai SDK): the Anthropic SDK (baseURL without /v1), AzureOpenAI
   * (baseURL its endpoint, `model` the deployment), or fetch on Gemini's native API (baseURL the
   * API's root, before /v1beta), or the Vercel AI SDK's OpenAI provider (bench/aisdk.ts, baseURL with /v1),
   * or @anthropic-ai/vertex-sdk (bench/vertex.ts, baseURL the gateway's /vertex/v1, apiKey a virtual key),
   * or the AWS SDK's Bedrock Converse (bench/bedrock.ts, baseURL the gateway's `/bedrock/<region>`).
   */
  sdk?: "openai" | "anthropic" | "azure" | "gemini" | "aisdk" | "vertex" | "bedrock";
  /** Azure's api-version (default 2024-10-21). */
  apiVersion?: string;
  /** Every n-th request (n > 0) is streamed, its usage not asked for, and read to its end. */
  streamEvery?: number;
  /** Extra request headers (x-slotgate-caller, x-slotgate-priority). */
  headers?: Record<string, string>;
  /** Wait this long after "go" before the first request (a caller that arrives later). */
  startDelayMs?: number;
  /** Pause between an answer and the next request, per worker (an interactive caller). */
  thinkMs?: number;
  /** Each request its own prompt, `<prompt> (<vary> #<n>)`: an eval's items; the same label gives the same items again. */
  vary?: string;
}

/** What one process reports: per request its latency and final status, in completion order. */
export interface ClientResult {
  start: number;
  end: number;
  latency: number[];
  status: number[];
  /** Per request, in the same order: when it was sent (epoch ms) and its x-slotgate-queue-ms (NaN without one). */
  sentAt: number[];
  queueMs: number[];
  /** Sum of x-slotgate-attempts over the answers that carried it. */
  gatewayAttempts: number;
  key: string | null;
}

const spec = JSON.parse(process.argv[2] ?? "{}") as ClientSpec;
const sdk = new OpenAI({ apiKey: spec.apiKey, baseURL: spec.baseURL, maxRetries: spec.maxRetries, timeout: 300_000, defaultHeaders: spec.headers });
const claude = new Anthropic({ apiKey: spec.apiKey, baseURL: spec.baseURL, maxRetries: spec.maxRetries, timeout: 300_000, defaultHeaders: spec.headers });
const azure = spec.sdk === "azure"
  ? new AzureOpenAI({ endpoint: spec.baseURL, apiKey: spec.apiKey, apiVersion: spec.apiVersion ?? "2024-10-21", deployment: spec.model, maxRetries: spec.maxRetries, timeout: 300_000, defaultHeaders: spec.headers })
  : null;
// Only their own processes load the AI SDK, the Vertex SDK or the AWS SDK.
const loaded = spec.sdk === "aisdk" ? (await import("./aisdk.ts")).aiSdkCaller(spec)
  : spec.sdk === "vertex" ? (await import("./vertex.ts")).vertexCaller(spec)
  : spec.sdk === "bedrock" ? (await import("./bedrock.ts")).bedrockCaller(spec)
  : null;
const streamed = (n: number) => !!spec.streamEvery && n % spec.streamEvery === spec.streamEvery - 1;
const bodyOf = (n: number) => ({
  model: spec.model,
  messages: [{ role: "user" as const, content: spec.vary === undefined ? spec.prompt : `${spec.prompt} (${spec.vary} #${n})` }],
  max_tokens: spec.maxTokens,
});
const rawInit = (n: number) => ({
  method: "POST",
  headers: { authorization: `Bearer ${spec.apiKey}`, "content-type": "application/json", ...spec.headers },
  body: JSON.stringify(bodyOf(n)),
});

/** Without `vary` every request is the same: build it once, so the client's CPU stays out of the figures. */
const fixed = spec.vary === undefined ? { body: bodyOf(0), init: rawInit(0) } : null;

/** Gemini's native generateContent (or streamGenerateContent?alt=sse), read to its end. */
async function gemini(n: number): Promise<{ status: number; headers: Headers | undefined }> {
  const verb = streamed(n) ? "streamGenerateContent?alt=sse" : "generateContent";
  const text = bodyOf(n).messages[0]!.content;
  const res = await fetch(`${spec.baseURL}/v1beta/models/${spec.model}:${verb}`, {
    method: "POST",
    headers: { "x-goog-api-key": spec.apiKey, "content-type": "application/json", ...spec.headers },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }], generationConfig: { maxOutputTokens: spec.maxTokens } }),
  });
  await res.arrayBuffer();
  return { status: res.status, headers: res.headers };
}

/** A chat completion with the openai SDK (or AzureOpenAI), streamed when it is the n-th's turn. */
async function chat(client: OpenAI, n: number): Promise<{ status: number; headers: Headers }> {
  const body = fixed?.body ?? bodyOf(n);
  if (!streamed(n)) {
    const { response } = await client.chat.completions.create(body).withResponse();
    return { status: response.status, headers: response.headers };
  }
  const { data, response } = await client.chat.completions.create({ ...body, stream: true }).withResponse();
  for await (const _ of data);
  return { status: response.status, headers: response.headers };
}

async function once(n: number): Promise<{ status: number; headers: Headers | undefined }> {
  const body = fixed?.body ?? bodyOf(n);
  if (spec.sdk === "gemini") return gemini(n);
  if (loaded) return loaded(body.messages[0]!.content, streamed(n));
  if (spec.raw) {
    const res = await fetch(`${spec.baseURL}/chat/completions`, fixed?.init ?? rawInit(n));
    await res.arrayBuffer();
    return { status: res.status, headers: res.headers };
  }
  try {
    if (spec.sdk !== "anthropic") return await chat(azure ?? sdk, n);
    const { response } = await claude.messages.create(body).withResponse();
    return { status: response.status, headers: response.headers };
  } catch (err) {
    if (err instanceof OpenAI.APIError || err instanceof Anthropic.APIError) return { status: err.status ?? 0, headers: err.headers as Headers | undefined };
    return { status: 0, headers: undefined };
  }
}

async function main(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => lines.once("line", () => resolve()));
  process.stdout.write("ready\n");
  await go;
  lines.close();
  const out: ClientResult = { start: Date.now(), end: 0, latency: [], status: [], sentAt: [], queueMs: [], gatewayAttempts: 0, key: null };
  if (spec.startDelayMs) await new Promise((r) => setTimeout(r, spec.startDelayMs));
  const stopAt = spec.durationMs ? out.start + spec.durationMs : Number.POSITIVE_INFINITY;
  let left = spec.durationMs ? Number.POSITIVE_INFINITY : spec.requests;
  const worker = async () => {
    while (left > 0 && Date.now() < stopAt) {
      const n = spec.requests - left--;
      const t = performance.now();
      const sentAt = Date.now();
      const { status, headers } = await once(n).catch(() => ({ status: 0, headers: undefined }));
      out.latency.push(performance.now() - t);
      out.status.push(status);
      out.sentAt.push(sentAt);
      out.queueMs.push(Number(headers?.get("x-slotgate-queue-ms") ?? Number.NaN));
      out.gatewayAttempts += Number(headers?.get("x-slotgate-attempts") ?? 0);
      out.key ??= headers?.get("x-slotgate-key") ?? null;
      if (spec.thinkMs && left > 0) await new Promise((r) => setTimeout(r, spec.thinkMs));
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  out.end = Date.now();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

await main();
