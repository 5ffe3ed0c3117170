// The Vertex AI stand-in driven directly (no gateway) by the clients its users have: Anthropic's
// @anthropic-ai/vertex-sdk (messages.create whole and streamed) and @google/genai in Vertex mode
// (generateContent, generateContentStream), each authenticating as it really does, through
// google-auth-library's service account flow against the stand-in's own token endpoint. Then
// tokens that expire mid-run, throttling per project, location and base model with no headers,
// 529 on demand, and usage equal to what the stand-in counts.
import AnthropicVertex from "@anthropic-ai/vertex-sdk";
import { ApiError, GoogleGenAI } from "@google/genai";
import { OAuth2Client } from "google-auth-library";
import { describe, expect, it } from "vitest";
import { DSQ_MESSAGE } from "../support/standin/index.ts";
import type { Standin } from "../support/standin/index.ts";
import { standin } from "./standin-helpers.ts";
import { claudeBody, claudePath, geminiBody, geminiPath, googleCredentials, limitHeaders, tokenFor, vertexPost } from "./vertex-helpers.ts";

const CLAUDE = "claude-sonnet-4-5@20250929";
const GEMINI = "gemini-2.5-flash";
const HELLO = [{ role: "user" as const, content: "Say hello to the Vertex stand-in" }];

async function claudeClient(s: Standin, project: string, region: string, extra: Partial<ConstructorParameters<typeof AnthropicVertex>[0]> = {}) {
  const { auth, posts } = await googleCredentials(s.serviceAccount({ project }));
  return { client: new AnthropicVertex({ baseURL: `${s.url}/v1`, region, projectId: project, googleAuth: auth, maxRetries: 0, ...extra }), posts };
}

async function geminiClient(s: Standin, project: string, location: string) {
  const { client, posts } = await googleCredentials(s.serviceAccount({ project }));
  return { ai: new GoogleGenAI({ vertexai: true, project, location, httpOptions: { baseUrl: s.url }, googleAuthOptions: { authClient: client } }), posts };
}

const failure = <E>(p: PromiseLike<unknown>) => Promise.resolve(p).then(() => expect.fail("expected the call to fail"), (e: unknown) => e as E);

describe("@anthropic-ai/vertex-sdk against the stand-in", () => {
  it("messages.create whole and streamed, regional and global: Anthropic's answers and events, usage equal to the stand-in's count", async () => {
    const s = await standin({ outputTokens: 9, streamChunks: 3 });
    const { client, posts } = await claudeClient(s, "proj-a", "us-east5");
    const whole = await client.messages.create({ model: CLAUDE, max_tokens: 64, messages: HELLO });
    expect(whole.type).toBe("message");
    expect(whole.content[0]).toMatchObject({ type: "text" });
    expect(whole.usage.output_tokens).toBe(9);
    const stream = client.messages.stream({ model: CLAUDE, max_tokens: 64, messages: HELLO });
    const events: string[] = [];
    for await (const e of stream) events.push(e.type);
    const final = await stream.finalMessage();
    expect(events[0]).toBe("message_start");
    expect(events).toContain("message_delta");
    expect(final.usage.output_tokens).toBe(9);
    // The SDK's URL: the project, the region and the model in the path, the verb by `stream`.
    expect(s.stats().log.map((a) => [decodeURIComponent(a.path), a.credential, a.status])).toEqual([
      [claudePath("proj-a", "us-east5", CLAUDE), "proj-a", 200],
      [claudePath("proj-a", "us-east5", CLAUDE, "streamRawPredict"), "proj-a", 200],
    ]);
    // One token for both (google-auth-library keeps it), minted at the stand-in's endpoint.
    expect(posts).toEqual([`${s.url}/token`]);
    expect(s.stats().oauth.issued).toBe(1);
    const global = await (await claudeClient(s, "proj-a", "global")).client.messages.create({ model: CLAUDE, max_tokens: 64, messages: HELLO });
    const counted = s.stats().usageBy["proj-a"]![CLAUDE]!;
    expect(counted).toEqual({
      answers: 3,
      input: whole.usage.input_tokens + final.usage.input_tokens + global.usage.input_tokens,
      output: whole.usage.output_tokens + final.usage.output_tokens + global.usage.output_tokens,
    });
    expect(decodeURIComponent(s.stats().log.at(-1)!.path)).toBe(claudePath("proj-a", "global", CLAUDE));
  });

  it("anthropic_version in the body: Vertex's own, or the dated API version the SDK sends; absent or first-party, refused", async () => {
    const s = await standin();
    const token = await tokenFor(s.serviceAccount({ project: "proj-a" }));
    const at = (version: string | undefined) => vertexPost(s, claudePath("proj-a", "us-east5", CLAUDE), token, claudeBody({ anthropic_version: version }));
    expect([(await at("vertex-2023-10-16")).status, (await at("2026-10-21")).status]).toEqual([200, 200]);
    const missing = await at(undefined);
    expect([missing.status, missing.json.error]).toEqual([400, { type: "invalid_request_error", message: "anthropic_version: Field required" }]);
    expect((await at("2023-06-01")).json.error.message).toBe("anthropic_version: Input should be 'vertex-2023-10-16'");
  });

  it("529 overloaded on demand, Anthropic's body, no limit headers", async () => {
    const s = await standin({ faults: { "529": 1 } });
    const { client } = await claudeClient(s, "proj-a", "us-east5");
    const e = await failure<InstanceType<typeof AnthropicVertex.APIError>>(client.messages.create({ model: CLAUDE, max_tokens: 64, messages: HELLO }));
    expect(e.status).toBe(529);
    expect(e.error).toMatchObject({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(limitHeaders(e.headers!)).toEqual([]);
  });
});

describe("@google/genai in Vertex mode against the stand-in", () => {
  it("generateContent and generateContentStream (SSE), v1beta1 paths, usageMetadata equal to the stand-in's count", async () => {
    const s = await standin({ outputTokens: 8, streamChunks: 4 });
    const { ai, posts } = await geminiClient(s, "proj-g", "us-central1");
    const whole = await ai.models.generateContent({ model: GEMINI, contents: "Say hello to the Vertex stand-in" });
    expect(whole.text!.split(" ")).toHaveLength(8);
    expect(whole.usageMetadata).toMatchObject({ candidatesTokenCount: 8, trafficType: "ON_DEMAND" });
    let text = "";
    let last: typeof whole.usageMetadata;
    for await (const chunk of await ai.models.generateContentStream({ model: GEMINI, contents: "Say hello to the Vertex stand-in" })) {
      text += chunk.text ?? "";
      last = chunk.usageMetadata;
    }
    expect(text.split(" ")).toHaveLength(8);
    expect(s.stats().log.map((a) => `${a.path}${a.query ? `?${a.query}` : ""}`)).toEqual([
      geminiPath("proj-g", "us-central1", GEMINI).replace("/v1/", "/v1beta1/"),
      `${geminiPath("proj-g", "us-central1", GEMINI, "streamGenerateContent").replace("/v1/", "/v1beta1/")}?alt=sse`,
    ]);
    expect(posts).toEqual([`${s.url}/token`]);
    expect(s.stats().usageBy["proj-g"]![GEMINI]).toEqual({
      answers: 2,
      input: whole.usageMetadata!.promptTokenCount! + last!.promptTokenCount!,
      output: whole.usageMetadata!.candidatesTokenCount! + last!.candidatesTokenCount!,
    });
  });

  it("the global location; and without alt=sse a stream is one JSON array of the chunks", async () => {
    const s = await standin({ outputTokens: 6, streamChunks: 3 });
    const { ai } = await geminiClient(s, "proj-g", "global");
    await ai.models.generateContent({ model: GEMINI, contents: "hi" });
    expect(s.stats().log[0]!.path).toBe(geminiPath("proj-g", "global", GEMINI).replace("/v1/", "/v1beta1/"));
    const token = await tokenFor(s.serviceAccount({ project: "proj-g" }));
    const array = await vertexPost(s, geminiPath("proj-g", "global", GEMINI, "streamGenerateContent"), token, geminiBody());
    expect(array.headers.get("content-type")).toMatch(/^application\/json/);
    expect(array.json).toHaveLength(3);
    expect(array.json.at(-1).usageMetadata).toMatchObject({ candidatesTokenCount: 6, trafficType: "ON_DEMAND" });
  });
});

describe("tokens that expire mid-run", () => {
  it("tokens live as long as the test says: google-auth-library mints again and every request is answered", async () => {
    const s = await standin({ tokenLifetimeSec: 1, latencyMs: 50 });
    const { client } = await claudeClient(s, "proj-e", "us-east5");
    const { ai } = await geminiClient(s, "proj-e", "europe-west4");
    const until = Date.now() + 3_000;
    let answered = 0;
    while (Date.now() < until) {
      await client.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO });
      await ai.models.generateContent({ model: GEMINI, contents: "hi" });
      answered += 2;
    }
    const st = s.stats();
    expect(st.successes).toBe(answered);
    expect(st.oauth.issued).toBeGreaterThanOrEqual(3);
    expect(st.unauthorized).toBe(0);
  });

  it("a token used past its life is refused 401 UNAUTHENTICATED (ACCESS_TOKEN_EXPIRED) in Google's shape, through the SDK too", async () => {
    const s = await standin({ tokenLifetimeSec: 1 });
    const token = await tokenFor(s.serviceAccount({ project: "proj-e" }));
    // A client holding a token it was given (no way to refresh it): what a caller's own token is.
    const held = new AnthropicVertex({ baseURL: `${s.url}/v1`, region: "us-east5", projectId: "proj-e", authClient: new OAuth2Client({ credentials: { access_token: token } }), maxRetries: 0 });
    await held.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO });
    await new Promise((r) => setTimeout(r, 1_100));
    const e = await failure<InstanceType<typeof AnthropicVertex.APIError>>(held.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO }));
    expect(e.status).toBe(401);
    expect(e.error).toEqual({
      error: {
        code: 401, status: "UNAUTHENTICATED",
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "ACCESS_TOKEN_EXPIRED", domain: "googleapis.com", metadata: { service: "aiplatform.googleapis.com", method: "google.cloud.aiplatform.v1.PredictionService.RawPredict" } }],
      },
    });
    expect(s.stats().oauth).toMatchObject({ issued: 1, expired: 1 });
  });
});

describe("throttling per project, location and base model, with no headers", () => {
  it("Claude: a 429 RESOURCE_EXHAUSTED naming the quota and base model, global_ on the global endpoint; never a limit header", async () => {
    const s = await standin({ keyLimits: { "proj-t": { rpm: 2 } } });
    const { client } = await claudeClient(s, "proj-t", "us-east5");
    for (let i = 0; i < 2; i++) await client.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO });
    const e = await failure<InstanceType<typeof AnthropicVertex.APIError>>(client.messages.create({ model: CLAUDE, max_tokens: 16, messages: HELLO }));
    expect(e.status).toBe(429);
    expect(e.error).toEqual({
      error: {
        code: 429, status: "RESOURCE_EXHAUSTED",
        message: "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: anthropic-claude-sonnet-4-5. Please submit a quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.",
      },
    });
    expect(limitHeaders(e.headers!)).toEqual([]);
    const token = await tokenFor(s.serviceAccount({ project: "proj-t" }));
    for (let i = 0; i < 2; i++) expect((await vertexPost(s, claudePath("proj-t", "global", CLAUDE), token, claudeBody())).status).toBe(200);
    const global = await vertexPost(s, claudePath("proj-t", "global", CLAUDE), token, claudeBody());
    expect(global.json.error.message).toMatch(/^Quota exceeded for aiplatform\.googleapis\.com\/global_online_prediction_requests_per_base_model with base model: anthropic-claude-sonnet-4-5\./);
    expect(s.stats().rateLimited).toBe(2);
  });

  it("Gemini on the dynamic shared quota: only \"Resource exhausted, please try again later.\", through @google/genai", async () => {
    const s = await standin({ keyLimits: { "proj-t": { rpm: 1 } } });
    const { ai } = await geminiClient(s, "proj-t", "us-central1");
    await ai.models.generateContent({ model: GEMINI, contents: "hi" });
    const e = await failure<ApiError>(ai.models.generateContent({ model: GEMINI, contents: "hi" }));
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(429);
    expect(JSON.parse(e.message)).toEqual({ error: { code: 429, message: DSQ_MESSAGE, status: "RESOURCE_EXHAUSTED" } });
  });

  it("one bucket per project, location and base model: versions of a base model share it, a rotating token keeps it, another region or model or project has its own", async () => {
    const s = await standin({ keyLimits: { "proj-t": { rpm: 1 }, "proj-u": { rpm: 1 } } });
    const key = s.serviceAccount({ project: "proj-t", projects: ["proj-t", "proj-u"] });
    const [first, second] = [await tokenFor(key), await tokenFor(key)];
    expect(first).not.toBe(second);
    const status = async (path: string, token: string, body: object) => (await vertexPost(s, path, token, body)).status;
    expect(await status(geminiPath("proj-t", "us-central1", "gemini-2.0-flash-001"), first, geminiBody())).toBe(200);
    // Another version of the same base model, with the next token: the same quota, spent.
    expect(await status(geminiPath("proj-t", "us-central1", "gemini-2.0-flash"), second, geminiBody())).toBe(429);
    expect(await status(geminiPath("proj-t", "europe-west4", "gemini-2.0-flash"), second, geminiBody())).toBe(200);
    expect(await status(geminiPath("proj-t", "us-central1", "gemini-2.5-pro"), second, geminiBody())).toBe(200);
    expect(await status(geminiPath("proj-u", "us-central1", "gemini-2.0-flash"), second, geminiBody())).toBe(200);
    expect(await status(claudePath("proj-t", "us-central1", CLAUDE), second, claudeBody())).toBe(200);
    expect(await status(claudePath("proj-t", "us-central1", "claude-sonnet-4-5@20251101"), first, claudeBody())).toBe(429);
  });

  it("tokens per minute: a request over the input-token quota names the input-token metric", async () => {
    const s = await standin({ keyLimits: { "proj-t": { itpm: 40, otpm: 10_000, tpm: 100_000 } } });
    const token = await tokenFor(s.serviceAccount({ project: "proj-t" }));
    const long = claudeBody({ messages: [{ role: "user", content: "x".repeat(120) }] }); // 30 input tokens
    expect((await vertexPost(s, claudePath("proj-t", "us-east5", CLAUDE), token, long)).status).toBe(200);
    const over = await vertexPost(s, claudePath("proj-t", "us-east5", CLAUDE), token, long);
    expect(over.status).toBe(429);
    expect(over.json.error.message).toContain("aiplatform.googleapis.com/online_prediction_input_tokens_per_minute_per_base_model with base model: anthropic-claude-sonnet-4-5");
    expect(s.stats().rateLimitedBy.input).toBe(1);
  });
});

describe("refusals before the model", () => {
  it("Gemini: an empty contents, a turn without a valid role; Claude: a body without max_tokens (each API's own shape)", async () => {
    const s = await standin();
    const token = await tokenFor(s.serviceAccount({ project: "proj-r" }));
    const gemini = geminiPath("proj-r", "us-central1", GEMINI);
    const empty = await vertexPost(s, gemini, token, { contents: [] });
    expect([empty.status, empty.json.error.status, empty.json.error.message]).toEqual([400, "INVALID_ARGUMENT", "Unable to submit request because it has an empty contents field. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"]);
    const roleless = await vertexPost(s, gemini, token, { contents: [{ parts: [{ text: "hi" }] }] });
    expect(roleless.json.error.message).toBe("Please use a valid role: user, model.");
    const noMax = await vertexPost(s, claudePath("proj-r", "us-east5", CLAUDE), token, claudeBody({ max_tokens: undefined }));
    expect([noMax.status, noMax.json]).toEqual([400, { type: "error", error: { type: "invalid_request_error", message: "max_tokens: Field required" } }]);
  });

  it("a model the project cannot use (404 naming it), a project without billing (403 BILLING_DISABLED), a host that does not serve the path's location", async () => {
    const s = await standin({ models: [GEMINI], quotaExhaustedKeys: ["proj-nobill"] });
    const token = await tokenFor(s.serviceAccount({ project: "proj-r", projects: ["proj-r", "proj-nobill"] }));
    const missing = await vertexPost(s, geminiPath("proj-r", "us-central1", "gemini-9-ultra"), token, geminiBody());
    expect([missing.status, missing.json.error.status]).toEqual([404, "NOT_FOUND"]);
    expect(missing.json.error.message).toMatch(/^Publisher Model `projects\/proj-r\/locations\/us-central1\/publishers\/google\/models\/gemini-9-ultra` was not found/);
    const nobill = await vertexPost(s, geminiPath("proj-nobill", "us-central1", GEMINI), token, geminiBody());
    expect([nobill.status, nobill.json.error.details[0].reason]).toEqual([403, "BILLING_DISABLED"]);
    const right = await vertexPost(s, `/us-central1-aiplatform.googleapis.com${geminiPath("proj-r", "us-central1", GEMINI)}`, token, geminiBody());
    const global = await vertexPost(s, `/aiplatform.googleapis.com${geminiPath("proj-r", "global", GEMINI)}`, token, geminiBody());
    const wrong = await vertexPost(s, `/europe-west4-aiplatform.googleapis.com${geminiPath("proj-r", "us-central1", GEMINI)}`, token, geminiBody());
    expect([right.status, global.status, wrong.status]).toEqual([200, 200, 400]);
    expect(s.stats().quotaErrors).toBe(1);
  });

  it("faults on demand: Claude's 529 is Anthropic's, a 503 and a 500 are Google's; Gemini's overload is a 503", async () => {
    const s = await standin({ faults: { "503": 1 } });
    const token = await tokenFor(s.serviceAccount({ project: "proj-r" }));
    const unavailable = await vertexPost(s, claudePath("proj-r", "us-east5", CLAUDE), token, claudeBody());
    expect([unavailable.status, unavailable.json.error.status]).toEqual([503, "UNAVAILABLE"]);
    s.configure({ faults: { "529": 1 } });
    const gemini = await vertexPost(s, geminiPath("proj-r", "us-central1", GEMINI), token, geminiBody());
    expect([gemini.status, gemini.json.error.message]).toEqual([503, "The model is overloaded. Please try again later."]);
    s.configure({ faults: { "500": 1 }, latencyMs: 0 });
    const internal = await vertexPost(s, geminiPath("proj-r", "us-central1", GEMINI), token, geminiBody());
    expect([internal.status, internal.json.error.status]).toEqual([500, "INTERNAL"]);
  });
});
