// Amazon Bedrock through `wrangler dev` (issue 41): the AWS SDK's Converse and ConverseStream and
// Anthropic's Bedrock SDK (whole and streamed) with only their endpoint changed, through a pool whose
// member holds IAM credentials the gateway signs with (the client sends a virtual key as its bearer
// token) and with the caller's own Bedrock API key passed through; a member with a wrong secret taken
// out at its first 403, never retried as a rate limit; the ledger equal to the stand-in's count,
// event streams included; no secret or signature anywhere a caller or operator can read.
import { ConverseCommand, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/gateway.ts";
import type { MintedKey } from "../support/pools.ts";
import {
  ACCOUNT, admin, anthropicBedrockVia, awsVia, CLAUDE, failure, KEY_A, KEY_B, KEY_C, LLAMA, OTHER_ACCOUNT, OWN_API_KEY, REGION, THIRD_ACCOUNT, SECRETS, USER, useBedrockStack, WRONG_SECRET,
} from "./bedrock-setup.ts";
import { ledger } from "./providers-setup.ts";
import { ADMIN_TOKEN, limiterState, until } from "./setup.ts";

/** An OTLP/HTTP receiver keeping each export's raw body: the spans are scanned for secrets too. */
const spans: string[] = [];
let receiver: Server;
let otlpPort = 0;
beforeAll(async () => {
  otlpPort = await freePort();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => (spans.push(Buffer.concat(chunks).toString("utf8")), res.writeHead(200, { "content-type": "application/json" }).end("{}")));
  });
  await new Promise<void>((ok) => receiver.listen(otlpPort, "127.0.0.1", ok));
});
afterAll(() => new Promise<void>((ok) => (receiver ? receiver.close(() => ok()) : ok())));

// Registered after the receiver's beforeAll: the gateway starts once its port is known.
const stack = useBedrockStack({ vars: () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlpPort}`, OTEL_BSP_SCHEDULE_DELAY: "100" }) });
/** Every answer a caller or operator saw in this file, for the scan at its end. */
const seen: string[] = [];
const minted: MintedKey[] = [];
const since = Date.now() - 60_000;

async function mint(name: string, pool: string): Promise<string> {
  const vk = await admin(stack).mint(name, pool);
  minted.push(vk);
  return vk.key;
}

/** Converse and ConverseStream with the AWS SDK, then messages.create whole and streamed with Anthropic's: each answer's text and usage. */
async function everyClient(token: string): Promise<{ input: number; output: number }[]> {
  const usage: { input: number; output: number }[] = [];
  const aws = awsVia(stack, token);
  const c = await aws.send(new ConverseCommand({ modelId: CLAUDE, messages: USER, inferenceConfig: { maxTokens: 64 } }));
  expect(c.output?.message?.content?.[0]?.text?.split(" ")).toHaveLength(9);
  usage.push({ input: c.usage!.inputTokens!, output: c.usage!.outputTokens! });
  const cs = await aws.send(new ConverseStreamCommand({ modelId: CLAUDE, messages: USER, inferenceConfig: { maxTokens: 64 } }));
  let text = "";
  for await (const e of cs.stream!) {
    text += e.contentBlockDelta?.delta?.text ?? "";
    if (e.metadata) usage.push({ input: e.metadata.usage!.inputTokens!, output: e.metadata.usage!.outputTokens! });
  }
  expect(text.split(" ")).toHaveLength(9);

  const claude = anthropicBedrockVia(stack, token);
  const whole = await claude.messages.create({ model: CLAUDE, max_tokens: 64, messages: [{ role: "user", content: "Count these words please" }] });
  expect(whole.content[0]).toMatchObject({ type: "text" });
  usage.push({ input: whole.usage.input_tokens, output: whole.usage.output_tokens });
  const stream = claude.messages.stream({ model: CLAUDE, max_tokens: 64, messages: [{ role: "user", content: "Count these words please" }] });
  let streamed = "";
  stream.on("text", (t) => (streamed += t));
  const final = await stream.finalMessage();
  expect(streamed.split(" ")).toHaveLength(9);
  usage.push({ input: final.usage.input_tokens, output: final.usage.output_tokens });
  seen.push(JSON.stringify([c, whole, final]));
  return usage;
}

/** The stand-in's log of requests signed with one access key id (a refused one names no credential: its authorization header does). */
const signed = (accessKeyId: string) =>
  stack.standin.stats().log.filter((a) => a.provider === "bedrock" && (a.credential === accessKeyId || a.extraCredentials.some((h) => h.includes(`Credential=${accessKeyId}/`))));

describe("Bedrock's clients with only their endpoint changed", () => {
  it("a virtual key on a pool of IAM credentials: the gateway signs each attempt with SigV4 for the member's region; both SDKs, whole and streamed", async () => {
    const vk = await mint("bedrock-evals", "aws");
    const before = signed(KEY_A.accessKeyId).length;
    const usage = await everyClient(vk);
    expect(usage.every((u) => u.input > 0 && u.output === 9)).toBe(true);
    // Signed with the member's key, checked by the stand-in with its secret (bedrock-auth.ts), at the member's region's host.
    const mine = signed(KEY_A.accessKeyId).slice(before);
    expect(mine.map((a) => [a.status, a.path])).toEqual([
      [200, `/bedrock/us-east-1/model/${encodeURIComponent(CLAUDE)}/converse`],
      [200, `/bedrock/us-east-1/model/${encodeURIComponent(CLAUDE)}/converse-stream`],
      [200, `/bedrock/us-east-1/model/${CLAUDE}/invoke`],
      [200, `/bedrock/us-east-1/model/${CLAUDE}/invoke-with-response-stream`],
    ]);
    // The virtual key never reaches the provider.
    expect(mine.flatMap((a) => a.extraCredentials).filter((c) => c.includes(vk))).toEqual([]);
  });

  it("a caller's own Bedrock API key, passed through as its bearer token: both SDKs, whole and streamed", async () => {
    const before = stack.standin.stats().log.length;
    await everyClient(OWN_API_KEY);
    const mine = stack.standin.stats().log.slice(before);
    expect(mine.map((a) => [a.status, a.credential, a.credentialHeader])).toEqual(Array(4).fill([200, OWN_API_KEY, "authorization"]));
  });
});

describe("a member signed wrongly", () => {
  it("is taken out at its first 403 with a clear reason, never retried as a rate limit; its pool's other member serves", async () => {
    const vk = await mint("bedrock-mixed", "aws-mixed");
    const aws = awsVia(stack, vk);
    const [wrongBefore, rightBefore] = [signed(KEY_B.accessKeyId).length, signed(KEY_A.accessKeyId).length];
    // Eight at once, twice: more than one member's first share, so the router meets the wrong one.
    for (let round = 0; round < 2; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => aws.send(new ConverseCommand({ modelId: LLAMA, messages: USER, inferenceConfig: { maxTokens: 32 } }))));
      expect(answers.map((c) => c.usage?.outputTokens)).toEqual(Array(8).fill(9));
    }
    // One refused attempt (the wrong secret: InvalidSignatureException, SigV4's SignatureDoesNotMatch), never again; the other member serves all sixteen.
    expect(signed(KEY_B.accessKeyId).slice(wrongBefore).map((a) => a.status)).toEqual([403]);
    expect(signed(KEY_A.accessKeyId).slice(rightBefore).map((a) => a.status)).toEqual(Array(16).fill(200));
    const { pools, text } = await admin(stack).pools();
    seen.push(text);
    const wrong = pools.find((p) => p.name === "aws-mixed")!.members.find((m) => m.name === "aws-wrong")!;
    expect(wrong).toMatchObject({ state: "out", reason: "invalidsignatureexception" });
    // Its key's limiter took no cut: a refused signature says nothing of the account's quota.
    const state = await limiterState(stack, wrong.keys[0]!);
    seen.push(JSON.stringify(state));
    expect(state.history.filter((h) => h.reason === "rate_limit")).toEqual([]);
  });

  it("alone in its pool: the caller gets the refusal, the provider is asked once, and then nothing is sent while it is out", async () => {
    const vk = await mint("bedrock-broken", "aws-broken");
    // A short deadline: a pool with every member out waits for one to come back until then (docs/contract.md, pool_unavailable).
    const claude = anthropicBedrockVia(stack, vk, { "x-slotgate-deadline-ms": "2000" });
    const ask = () => claude.messages.create({ model: CLAUDE, max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
    const first = await failure(ask());
    const second = await failure(ask());
    seen.push(first.body, second.body);
    expect([first.status, first.message]).toEqual([403, expect.stringContaining("The request signature we calculated does not match")]);
    expect([second.status, second.error]).toEqual([503, "pool_unavailable"]);
    expect(signed(KEY_C.accessKeyId).map((a) => a.status)).toEqual([403]);
  });
});

describe("usage and secrets", () => {
  it("the ledger's tokens per model equal the stand-in's count exactly, event streams included", async () => {
    const charged = stack.standin.stats().bedrock;
    const expected: Record<string, { requests: number; inputTokens: number; outputTokens: number; unknownUsage: number }> = {};
    for (const acct of [ACCOUNT, OTHER_ACCOUNT, THIRD_ACCOUNT])
      for (const [model, c] of Object.entries(charged[acct] ?? {})) {
        const e = (expected[model] ??= { requests: 0, inputTokens: 0, outputTokens: 0, unknownUsage: 0 });
        e.requests += c.answers;
        e.inputTokens += c.input;
        e.outputTokens += c.output;
      }
    // Four answers per client run on Claude (two of them streams), twice; sixteen on Llama.
    expect(expected[CLAUDE]?.requests).toBe(8);
    expect(expected[LLAMA]?.requests).toBe(16);
    const rows = await ledger(stack, since, Object.fromEntries(Object.entries(expected).map(([m, e]) => [m, e.requests])));
    expect(Object.fromEntries(Object.keys(expected).map((m) => [m, rows[m]]))).toEqual(expected);
  });

  it("a budgeted virtual key asking through Converse reserves its inferenceConfig.maxTokens, not the model's whole output; near its cap the 402 names that field", async () => {
    const budgeted = async (name: string, budget: number) => {
      const res = await admin(stack).fetch("POST", "/admin/virtual-keys", { name, pool: "aws", budget });
      expect(res.status, await res.clone().text()).toBe(201);
      const vk = (await res.json()) as MintedKey;
      minted.push(vk);
      return vk.key;
    };
    const ask = { modelId: CLAUDE, messages: USER, inferenceConfig: { maxTokens: 100 } };
    // A cent: 100 output tokens at Bedrock's regional $5.50 a million and the prompt fit it many times;
    // the model's 64,000 (what was reserved before, its maxOutput in PRICES) would cost $0.352.
    const aws = awsVia(stack, await budgeted("bedrock-budget-cent", 0.01));
    for (let i = 0; i < 3; i++) expect((await aws.send(new ConverseCommand(ask))).$metadata.httpStatusCode).toBe(200);
    // Four hundredths of a cent: the prompt and about 50 output tokens, not 100; the answer says how many fit, in Converse's field.
    const tight = await budgeted("bedrock-budget-tight", 0.0004);
    const res = await fetch(`${stack.gateway.url}/bedrock/${REGION}/model/${encodeURIComponent(CLAUDE)}/converse`, {
      method: "POST", headers: { authorization: `Bearer ${tight}`, "content-type": "application/json" }, body: JSON.stringify({ messages: USER, inferenceConfig: { maxTokens: 100 } }),
    });
    const text = await res.text();
    seen.push(text);
    expect(res.status, text).toBe(402);
    const most = Number(/with inferenceConfig\.maxTokens at most ([\d,]+) it would fit/.exec(JSON.parse(text).error.message)?.[1]?.replaceAll(",", ""));
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(100);
    const fits = await awsVia(stack, tight).send(new ConverseCommand({ ...ask, inferenceConfig: { maxTokens: most } }));
    expect(fits.$metadata.httpStatusCode).toBe(200);
  });

  it("no secret, key or signature in wrangler's output, a span, an admin answer, the metrics or an error body", async () => {
    await until("Bedrock's spans", () => spans.some((b) => b.includes("aws.bedrock")));
    const auth = (path: string) => fetch(`${stack.gateway.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
    seen.push(await auth("/admin/pools"), await auth(`/admin/usage?since=${since}&by=key`), await auth("/admin/virtual-keys"), await auth("/metrics"));
    for (const key of JSON.parse(await auth(`/admin/usage?since=${since}&by=key`)).rows.map((r: { key: string }) => r.key) as string[]) seen.push(await auth(`/admin/keys/${encodeURIComponent(key)}`));
    // The gateway's own signatures, as the stand-in received them.
    const signatures = stack.standin.stats().log.flatMap((a) => a.extraCredentials).map((h) => /Signature=([0-9a-f]{64})/.exec(h)?.[1]).filter((s): s is string => !!s);
    expect(signatures.length).toBeGreaterThan(5);
    const needles = [...Object.values(SECRETS), WRONG_SECRET, OWN_API_KEY, ...minted.map((m) => m.key), ...signatures];
    const haystacks = { output: stack.gateway.output(), spans: spans.join("\n"), answers: seen.join("\n") };
    expect(haystacks.output.length).toBeGreaterThan(1000);
    for (const [where, text] of Object.entries(haystacks)) expect(needles.filter((n) => text.includes(n)), where).toEqual([]);
    // Access key ids are not secrets (AWS prints them in errors), but the gateway has no reason to show them either.
    expect([KEY_A.accessKeyId, KEY_B.accessKeyId, KEY_C.accessKeyId].filter((id) => Object.values(haystacks).some((text) => text.includes(id)))).toEqual([]);
  });
});
