// The stand-in Bedrock driven directly (no gateway) by the clients its users have: the AWS SDK's
// Bedrock runtime client, Anthropic's Bedrock SDK, the AI SDK's Bedrock provider and the openai SDK
// on Bedrock's OpenAI-compatible route; SigV4 checked with each account's secret, API keys as bearer
// tokens, limits per account, region and model with no headers, faults, usage as Bedrock reports it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock";
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { generateText, streamText } from "ai";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { ACCOUNT, anthropicBedrock, anthropicBody, API_KEY, awsClient, CLAUDE, endpoint, failure, KEY, LLAMA, USER } from "./standin-bedrock-helpers.ts";
import { post, standin } from "./standin-helpers.ts";

const dec = new TextDecoder();
const total = (u: { input: number; output: number }[]) => u.reduce((a, b) => ({ input: a.input + b.input, output: a.output + b.output }), { input: 0, output: 0 });

describe("stand-in Bedrock: the AWS SDK, signed with SigV4", () => {
  it("Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream: usage as reported equals the stand-in's charge", async () => {
    const s = await standin({ outputTokens: 6, streamChunks: 3 });
    const client = awsClient(s);
    const seen: { input: number; output: number }[] = [];

    const c = await client.send(new ConverseCommand({ modelId: CLAUDE, messages: USER, inferenceConfig: { maxTokens: 50 } }));
    expect(c.output?.message?.content?.[0]?.text?.split(" ")).toHaveLength(6);
    expect(c.usage).toMatchObject({ outputTokens: 6, totalTokens: c.usage!.inputTokens! + 6 });
    seen.push({ input: c.usage!.inputTokens!, output: c.usage!.outputTokens! });

    const cs = await client.send(new ConverseStreamCommand({ modelId: CLAUDE, messages: USER }));
    let text = "";
    for await (const e of cs.stream!) {
      text += e.contentBlockDelta?.delta?.text ?? "";
      if (e.metadata) seen.push({ input: e.metadata.usage!.inputTokens!, output: e.metadata.usage!.outputTokens! });
    }
    expect(text.split(" ")).toHaveLength(6);

    const inv = await client.send(new InvokeModelCommand({ modelId: CLAUDE, contentType: "application/json", body: JSON.stringify(anthropicBody()) }));
    const msg = JSON.parse(dec.decode(inv.body));
    expect(msg).toMatchObject({ type: "message", role: "assistant", stop_reason: "end_turn", usage: { output_tokens: 6 } });
    seen.push({ input: msg.usage.input_tokens, output: msg.usage.output_tokens });

    const st = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, contentType: "application/json", body: JSON.stringify(anthropicBody()) }));
    const events: { type: string; [k: string]: unknown }[] = [];
    for await (const e of st.body!) events.push(JSON.parse(dec.decode(e.chunk!.bytes)));
    expect(events.map((e) => e.type)).toEqual(["message_start", "content_block_start", ...Array(3).fill("content_block_delta"), "content_block_stop", "message_delta", "message_stop"]);
    const metrics = events.at(-1)!["amazon-bedrock-invocationMetrics"] as { inputTokenCount: number; outputTokenCount: number };
    expect(metrics.outputTokenCount).toBe(6);
    expect((events[0]!.message as { usage: { input_tokens: number } }).usage.input_tokens).toBe(metrics.inputTokenCount);
    seen.push({ input: metrics.inputTokenCount, output: metrics.outputTokenCount });

    expect(s.stats().usage).toEqual(total(seen));
    expect(s.stats().bedrock[ACCOUNT]![CLAUDE]).toEqual({ answers: 4, ...total(seen) });
    expect(s.stats().log.map((a) => [a.provider, a.status, a.credential])).toEqual(Array(4).fill(["bedrock", 200, KEY.accessKeyId]));
  });

  it("InvokeModel of a Llama model: its own body; the usage headers on every InvokeModel answer", async () => {
    const s = await standin({ outputTokens: 5 });
    const inv = await awsClient(s).send(new InvokeModelCommand({ modelId: LLAMA, body: JSON.stringify({ prompt: "Say hi to the stand-in", max_gen_len: 64 }) }));
    const body = JSON.parse(dec.decode(inv.body));
    expect(body).toMatchObject({ generation_token_count: 5, stop_reason: "stop" });
    const res = await post(s, `/bedrock/us-east-1/model/${encodeURIComponent(LLAMA)}/invoke`, { prompt: "Say hi to the stand-in" }, { authorization: `Bearer ${API_KEY}` });
    expect([res.headers.get("x-amzn-bedrock-input-token-count"), res.headers.get("x-amzn-bedrock-output-token-count")]).toEqual([String(body.prompt_token_count), "5"]);
    expect(res.headers.get("x-amzn-requestid")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("a wrong secret is refused with 403 InvalidSignatureException (SigV4's SignatureDoesNotMatch) and nothing is served", async () => {
    const s = await standin();
    const e = await failure(awsClient(s, { credentials: { ...KEY, secretAccessKey: `${KEY.secretAccessKey}x` } }).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })));
    expect(e).toMatchObject({ name: "InvalidSignatureException", status: 403 });
    expect(e.message).toBe("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
    const raw = await post(s, `/bedrock/us-east-1/model/${CLAUDE}/converse`, { messages: USER }, { authorization: `AWS4-HMAC-SHA256 Credential=${KEY.accessKeyId}/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`, "x-amz-date": new Date().toISOString().replace(/[-:]|\.\d{3}/g, "") });
    expect([raw.status, raw.headers.get("x-amzn-errortype")]).toEqual([403, "InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/"]);
    const unknown = await failure(awsClient(s, { credentials: { accessKeyId: "AKIAUNKNOWN000000000", secretAccessKey: "x" } }).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })));
    expect(unknown).toEqual({ name: "UnrecognizedClientException", status: 403, message: "The security token included in the request is invalid." });
    expect(s.stats()).toMatchObject({ unauthorized: 3, successes: 0, usage: { input: 0, output: 0 }, bedrock: {} });
  });

  it("a signature scoped to another region than the host's is refused; the host's own region is served", async () => {
    const s = await standin();
    const client = awsClient(s, { region: "eu-west-1" });
    expect((await client.send(new ConverseCommand({ modelId: CLAUDE, messages: USER }))).usage?.outputTokens).toBeGreaterThan(0);
    // Signed for eu-west-1, sent to us-east-1's host.
    const cross = new BedrockRuntimeClient({ region: "eu-west-1", endpoint: endpoint(s, "us-east-1"), credentials: KEY, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
    expect(await failure(cross.send(new ConverseCommand({ modelId: CLAUDE, messages: USER })))).toMatchObject({ name: "InvalidSignatureException", status: 403 });
  });
});

describe("stand-in Bedrock: a caller's own credential through a gateway", () => {
  it("a SigV4 request signed for the gateway's host cannot be forwarded; a bearer API key can", async () => {
    const s = await standin();
    // What a caller's AWS SDK sends to a gateway at another host, captured as the gateway gets it.
    const got: { path: string; headers: Record<string, string>; body: Buffer }[] = [];
    const gw = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        got.push({ path: req.url!, headers: req.headers as Record<string, string>, body: Buffer.concat(parts) });
        res.writeHead(503, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => gw.listen(0, "127.0.0.1", () => r()));
    const gateway = `http://127.0.0.1:${(gw.address() as AddressInfo).port}/bedrock`;
    const sdk = (auth: object) => new BedrockRuntimeClient({ region: "us-east-1", endpoint: gateway, maxAttempts: 1, requestHandler: new NodeHttpHandler(), ...auth });
    await sdk({ credentials: KEY }).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })).catch(() => null);
    await sdk({ token: { token: API_KEY }, authSchemePreference: ["httpBearerAuth"] }).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })).catch(() => null);
    gw.close();
    // Forwarded as it came, to the provider's host and path: the signature covers the gateway's host and path.
    const forward = (r: (typeof got)[number]) => {
      const { host: _host, "content-length": _len, connection: _c, ...headers } = r.headers;
      return fetch(`${endpoint(s)}${r.path.replace(/^\/bedrock/, "")}`, { method: "POST", headers, body: r.body });
    };
    const signed = await forward(got[0]!);
    expect([signed.status, signed.headers.get("x-amzn-errortype")?.split(":")[0]]).toEqual([403, "InvalidSignatureException"]);
    expect((await forward(got[1]!)).status).toBe(200);
  });
});

describe("stand-in Bedrock: API keys as bearer tokens", () => {
  it("the AWS SDK with a token, Anthropic's SDK with apiKey; a key of no account refused as AWS does", async () => {
    const s = await standin({ outputTokens: 4 });
    const c = await awsClient(s, { token: API_KEY }).send(new ConverseCommand({ modelId: CLAUDE, messages: USER }));
    expect(c.usage?.outputTokens).toBe(4);
    const m = await anthropicBedrock(s, { apiKey: API_KEY }).messages.create({ model: CLAUDE, max_tokens: 32, messages: [{ role: "user", content: "hi there" }] });
    expect(m.usage.output_tokens).toBe(4);
    expect(s.stats().log.map((a) => [a.credentialHeader, a.credential])).toEqual([["authorization", API_KEY], ["authorization", API_KEY]]);
    expect(await failure(awsClient(s, { token: "sgk-not-a-bedrock-key" }).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })))).toEqual({
      name: "AccessDeniedException", status: 403, message: "Invalid API Key format: Must start with pre-defined prefix",
    });
    expect(await failure(anthropicBedrock(s, { apiKey: "ABSKbm90LWEta2V5" }).messages.create({ model: CLAUDE, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }))).toMatchObject({
      status: 403, message: expect.stringContaining("Authentication failed: Please make sure your API Key is valid."),
    });
  });
});

describe("stand-in Bedrock: Anthropic's Bedrock SDK, signed", () => {
  it("messages.create whole and streamed: usage equal to the stand-in's charge; a wrong secret refused", async () => {
    const s = await standin({ outputTokens: 7, streamChunks: 3 });
    const client = anthropicBedrock(s);
    const whole = await client.messages.create({ model: CLAUDE, max_tokens: 64, messages: [{ role: "user", content: "Count these words please" }] });
    expect(whole.content[0]).toMatchObject({ type: "text" });
    const stream = client.messages.stream({ model: CLAUDE, max_tokens: 64, messages: [{ role: "user", content: "Count these words please" }] });
    let text = "";
    stream.on("text", (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text.split(" ")).toHaveLength(7);
    const seen = [whole.usage, final.usage].map((u) => ({ input: u.input_tokens, output: u.output_tokens }));
    expect(s.stats().bedrock[ACCOUNT]![CLAUDE]).toEqual({ answers: 2, ...total(seen) });
    // Anthropic's SDK leaves the model id's ":" unencoded in the path (the AWS SDK sends %3A): both sign what they send.
    expect(s.stats().log.map((a) => a.path)).toEqual([`/bedrock/us-east-1/model/${CLAUDE}/invoke`, `/bedrock/us-east-1/model/${CLAUDE}/invoke-with-response-stream`]);
    expect(await failure(anthropicBedrock(s, { secret: "wrong" }).messages.create({ model: CLAUDE, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }))).toMatchObject({ status: 403 });
  });
});

describe("stand-in Bedrock: limits per account, region and model, told by refusals only", () => {
  it("requests per minute: a 429 ThrottlingException with no rate-limit or retry-after header; other models, regions and accounts untouched", async () => {
    const s = await standin({ bedrock: { limits: { [CLAUDE]: { rpm: 2 } } } as never });
    const send = (region = "us-east-1", model = CLAUDE) => post(s, `/bedrock/${region}/model/${encodeURIComponent(model)}/converse`, { messages: USER }, { authorization: `Bearer ${API_KEY}` });
    expect([(await send()).status, (await send()).status]).toEqual([200, 200]);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ message: "Too many requests, please wait before trying again." });
    expect(refused.headers.get("x-amzn-errortype")).toBe("ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/");
    expect([...refused.headers.keys()].filter((h) => /ratelimit|retry-after|limit/.test(h))).toEqual([]);
    expect([(await send("us-west-2")).status, (await send("us-east-1", "anthropic.claude-haiku-4-5-20251001-v1:0")).status]).toEqual([200, 200]);
    expect(await failure(awsClient(s).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })))).toEqual({ name: "ThrottlingException", status: 429, message: "Too many requests, please wait before trying again." });
    expect(s.stats().rateLimitedBy.requests).toBe(2);
  });

  it("tokens per minute: a request reserves its output limit and is settled at what it drew (Claude 4.x's output five times); an ARN counts as its profile; limits per account", async () => {
    const other = { id: "444455556666", keys: [{ accessKeyId: "AKIAOTHERACCOUNT0001", secretAccessKey: "other/secret" }], apiKeys: ["ABSKb3RoZXI="] };
    const limits = { [`${ACCOUNT}/us-east-1/${CLAUDE}`]: { tpm: 1_100 }, [`us-east-1/${LLAMA}`]: { tpm: 1_100 } };
    const s = await standin({ outputTokens: 6, bedrock: { accounts: [{ id: ACCOUNT, keys: [KEY], apiKeys: [API_KEY] }, other], limits } as never });
    const arn = `arn:aws:bedrock:us-east-1:${ACCOUNT}:inference-profile/${CLAUDE}`;
    const client = awsClient(s);
    const converse = (maxTokens: number, c = client) => c.send(new ConverseCommand({ modelId: CLAUDE, messages: USER, inferenceConfig: { maxTokens } }));
    // 1,000 output tokens reserve 1,000 of 1,100 (not at five); the answer used 6 (30 at five): the rest comes back, so the next one fits.
    await client.send(new InvokeModelCommand({ modelId: arn, body: JSON.stringify(anthropicBody({ max_tokens: 1_000 })) }));
    expect((await converse(1_000)).usage?.outputTokens).toBe(6);
    // 1,200 reserve more than the minute holds.
    expect(await failure(converse(1_200))).toEqual({ name: "ThrottlingException", status: 429, message: "Too many tokens, please wait before trying again." });
    // A request that names no output limit reserves the model's whole output (64,000): more than the minute holds too.
    expect(await failure(client.send(new ConverseCommand({ modelId: CLAUDE, messages: USER })))).toMatchObject({ name: "ThrottlingException", status: 429 });
    // Llama counts its output once: 300 fit.
    expect((await client.send(new InvokeModelCommand({ modelId: LLAMA, body: JSON.stringify({ prompt: "hi", max_gen_len: 300 }) }))).body).toBeDefined();
    expect((await converse(200, awsClient(s, { credentials: other.keys[0]! }))).usage).toBeDefined();
    expect(Object.keys(s.stats().bedrock)).toEqual([ACCOUNT, other.id]);
    expect(Object.keys(s.stats().bedrock[ACCOUNT]!).sort()).toEqual([arn, CLAUDE, LLAMA].sort());
    expect(s.stats().rateLimitedBy.tokens).toBe(2);
  });
});

describe("stand-in Bedrock: faults on demand", () => {
  for (const [fault, status] of [["ServiceUnavailableException", 503], ["ModelNotReadyException", 429], ["ValidationException", 400], ["ModelErrorException", 424], ["ModelTimeoutException", 408]] as const) {
    it(`${fault}: ${status}, as the SDK names it, nothing charged`, async () => {
      const s = await standin({ bedrock: { faults: { [fault]: 1 } } as never });
      expect(await failure(awsClient(s).send(new ConverseCommand({ modelId: CLAUDE, messages: USER })))).toMatchObject({ name: fault, status });
      expect(s.stats()).toMatchObject({ faults: { [status]: 1 }, usage: { input: 0, output: 0 }, bedrock: {} });
    });
  }

  it("a stream that ends in an exception event: the SDK throws it mid-stream; a Claude stream charges what its message_start reported", async () => {
    const s = await standin({ bedrock: { streamFaults: { throttlingException: 1 } } as never });
    const cs = await awsClient(s).send(new ConverseStreamCommand({ modelId: CLAUDE, messages: USER }));
    const got: string[] = [];
    const e = await failure((async () => {
      for await (const ev of cs.stream!) got.push(Object.keys(ev)[0]!);
    })());
    expect(e).toMatchObject({ name: "ThrottlingException", message: "Too many tokens, please wait before trying again." });
    expect(got[0]).toBe("messageStart");
    expect(s.stats().usage).toEqual({ input: 0, output: 0 });
    const st = await awsClient(s).send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, body: JSON.stringify(anthropicBody()) }));
    expect(await failure((async () => {
      for await (const _ of st.body!);
    })())).toMatchObject({ name: "ThrottlingException" });
    expect(s.stats().usage.output).toBe(1);
  });

  it("a body Bedrock cannot take: 400 ValidationException with its validator's message", async () => {
    const s = await standin();
    const e = await failure(awsClient(s).send(new InvokeModelCommand({ modelId: CLAUDE, body: JSON.stringify({ messages: [], max_tokens: 5 }) })));
    expect(e).toEqual({ name: "ValidationException", status: 400, message: "Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again." });
  });
});

describe("stand-in Bedrock: the AI SDK's provider and the OpenAI-compatible route", () => {
  it("@ai-sdk/amazon-bedrock (Converse, ConverseStream), signed and with an API key", async () => {
    const s = await standin({ outputTokens: 5, streamChunks: 2 });
    const signed = createAmazonBedrock({ region: "us-east-1", baseURL: endpoint(s), accessKeyId: KEY.accessKeyId, secretAccessKey: KEY.secretAccessKey });
    const r = await generateText({ model: signed(CLAUDE), prompt: "Say hello to the stand-in", maxRetries: 0 });
    expect(r.usage.outputTokens).toBe(5);
    const keyed = createAmazonBedrock({ region: "us-east-1", baseURL: endpoint(s), apiKey: API_KEY });
    const st = streamText({ model: keyed(CLAUDE), prompt: "Say hello to the stand-in", maxRetries: 0 });
    expect((await st.text).split(" ")).toHaveLength(5);
    expect((await st.usage).outputTokens).toBe(5);
    expect(s.stats().bedrock[ACCOUNT]![CLAUDE]).toEqual({ answers: 2, input: r.usage.inputTokens! + (await st.usage).inputTokens!, output: 10 });
  });

  it("the openai SDK on /openai/v1/chat/completions with an API key: usage as OpenAI reports it", async () => {
    const s = await standin({ outputTokens: 4 });
    const client = new OpenAI({ baseURL: `${endpoint(s, "us-west-2")}/openai/v1`, apiKey: API_KEY, maxRetries: 0 });
    const c = await client.chat.completions.create({ model: "openai.gpt-oss-20b-1:0", messages: [{ role: "user", content: "hi there" }] });
    expect(c.usage).toMatchObject({ completion_tokens: 4 });
    let usage: OpenAI.CompletionUsage | null = null;
    for await (const ch of await client.chat.completions.create({ model: "openai.gpt-oss-20b-1:0", messages: [{ role: "user", content: "hi there" }], stream: true, stream_options: { include_usage: true } })) usage = ch.usage ?? usage;
    expect(s.stats().bedrock[ACCOUNT]!["openai.gpt-oss-20b-1:0"]).toEqual({ answers: 2, input: c.usage!.prompt_tokens + usage!.prompt_tokens, output: 8 });
  });
});
