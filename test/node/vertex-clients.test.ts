// How each Vertex client reaches a gateway with only its base URL and its key changed, run against
// the stand-in through a miniature of the gateway's Vertex path (vertex-shim.ts): each client as a
// virtual-key caller would write it (`sgk-...` where the client puts its credential) and as a caller
// with its own Google token. What the client sent, where it went, the limit key read off the path,
// and the stand-in's count are checked; these snippets are the ones the research in the report
// quotes (issue 41 item 1, "say per client how").
import AnthropicVertex from "@anthropic-ai/vertex-sdk";
import { createVertex } from "@ai-sdk/google-vertex";
import { createVertexAnthropic } from "@ai-sdk/google-vertex/anthropic";
import { GoogleGenAI } from "@google/genai";
import { generateText, streamText } from "ai";
import { OAuth2Client } from "google-auth-library";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readServiceAccountKey } from "../../src/providers/auth/service-account";
import type { Standin } from "../support/standin/index.ts";
import { standin } from "./standin-helpers.ts";
import { googleCredentials } from "./vertex-helpers.ts";
import { startShim, type Shim } from "./vertex-shim.ts";

const CLAUDE = "claude-sonnet-4-5@20250929";
const GEMINI = "gemini-2.5-flash";
const VK = "sgk-team-a-0123456789abcdef";
const HELLO = [{ role: "user" as const, content: "Say hello through the gateway" }];

let s: Standin;
let gw: Shim;
beforeEach(async () => {
  s = await standin({ outputTokens: 5, streamChunks: 2 });
  const member = readServiceAccountKey(s.serviceAccount({ project: "member-proj", name: "pool" }));
  gw = await startShim(s.url, { [VK]: { key: member, project: "member-proj", location: "us-east5" } });
});
afterEach(() => gw.close());

/** A Google auth client that only ever says `Authorization: Bearer <key>`: how a virtual key rides every client's Google auth. */
const bearer = (key: string) => new OAuth2Client({ credentials: { access_token: key } });
const counted = (project: string, model: string) => s.stats().usageBy[project]?.[model];

describe("@anthropic-ai/vertex-sdk", () => {
  it("virtual key: baseURL the gateway's, the key as the Bearer token through an OAuth2Client; region and projectId required but replaced by the member's", async () => {
    const client = new AnthropicVertex({ baseURL: `${gw.url}/vertex/v1`, region: "us-east5", projectId: "any-project", authClient: bearer(VK) });
    const whole = await client.messages.create({ model: CLAUDE, max_tokens: 32, messages: HELLO });
    const streamed = await client.messages.stream({ model: CLAUDE, max_tokens: 32, messages: HELLO }).finalMessage();
    expect(gw.passed.map((p) => [p.via, p.header, p.path, p.upstream, p.limitKey, p.status])).toEqual([
      ["virtual", "authorization", `/v1/projects/any-project/locations/us-east5/publishers/anthropic/models/${CLAUDE}:rawPredict`,
        `/v1/projects/member-proj/locations/us-east5/publishers/anthropic/models/${CLAUDE}:rawPredict`, "vertex:us-east5/anthropic-claude-sonnet-4-5:member-proj", 200],
      ["virtual", "authorization", `/v1/projects/any-project/locations/us-east5/publishers/anthropic/models/${CLAUDE}:streamRawPredict`,
        `/v1/projects/member-proj/locations/us-east5/publishers/anthropic/models/${CLAUDE}:streamRawPredict`, "vertex:us-east5/anthropic-claude-sonnet-4-5:member-proj", 200],
    ]);
    expect(counted("member-proj", CLAUDE)).toEqual({ answers: 2, input: whole.usage.input_tokens + streamed.usage.input_tokens, output: whole.usage.output_tokens + streamed.usage.output_tokens });
    // The stand-in checked the host the shim chose for the location (us-east5-aiplatform.googleapis.com).
    expect(s.stats().log.map((a) => a.path.split("/")[1])).toEqual(["us-east5-aiplatform.googleapis.com", "us-east5-aiplatform.googleapis.com"]);
  });

  it("own token: the client's own Google credentials, baseURL the gateway's; the token and the path pass untouched", async () => {
    const { auth } = await googleCredentials(s.serviceAccount({ project: "caller-proj" }));
    const client = new AnthropicVertex({ baseURL: `${gw.url}/vertex/v1`, region: "global", projectId: "caller-proj", googleAuth: auth });
    await client.messages.create({ model: CLAUDE, max_tokens: 32, messages: HELLO });
    expect(gw.passed.map((p) => [p.via, p.upstream, p.limitKey, p.status])).toEqual([
      ["own", `/v1/projects/caller-proj/locations/global/publishers/anthropic/models/${CLAUDE}:rawPredict`, "vertex:global/anthropic-claude-sonnet-4-5:caller-proj", 200],
    ]);
    expect(counted("caller-proj", CLAUDE)?.answers).toBe(1);
  });
});

describe("@google/genai in Vertex mode", () => {
  it("virtual key as the Bearer token: httpOptions.baseUrl the gateway's, googleAuthOptions.authClient the key", async () => {
    const ai = new GoogleGenAI({ vertexai: true, project: "any-project", location: "us-central1", httpOptions: { baseUrl: `${gw.url}/vertex` }, googleAuthOptions: { authClient: bearer(VK) } });
    const whole = await ai.models.generateContent({ model: GEMINI, contents: "hello" });
    let last;
    for await (const c of await ai.models.generateContentStream({ model: GEMINI, contents: "hello" })) last = c.usageMetadata;
    expect(gw.passed.map((p) => [p.via, p.path, p.upstream, p.status])).toEqual([
      ["virtual", `/v1beta1/projects/any-project/locations/us-central1/publishers/google/models/${GEMINI}:generateContent`,
        `/v1beta1/projects/member-proj/locations/us-east5/publishers/google/models/${GEMINI}:generateContent`, 200],
      ["virtual", `/v1beta1/projects/any-project/locations/us-central1/publishers/google/models/${GEMINI}:streamGenerateContent`,
        `/v1beta1/projects/member-proj/locations/us-east5/publishers/google/models/${GEMINI}:streamGenerateContent`, 200],
    ]);
    expect(counted("member-proj", GEMINI)).toEqual({ answers: 2, input: whole.usageMetadata!.promptTokenCount! + last!.promptTokenCount!, output: whole.usageMetadata!.candidatesTokenCount! + last!.candidatesTokenCount! });
  });

  it("virtual key as express mode's API key: no project or location in the path, the gateway puts its member's in", async () => {
    const ai = new GoogleGenAI({ vertexai: true, apiKey: VK, httpOptions: { baseUrl: `${gw.url}/vertex` } });
    await ai.models.generateContent({ model: GEMINI, contents: "hello" });
    expect(gw.passed.map((p) => [p.via, p.header, p.path, p.upstream, p.status])).toEqual([
      ["virtual", "x-goog-api-key", `/v1beta1/publishers/google/models/${GEMINI}:generateContent`, `/v1beta1/projects/member-proj/locations/us-east5/publishers/google/models/${GEMINI}:generateContent`, 200],
    ]);
  });

  it("own token: googleAuthOptions with the caller's credentials, passed through to the caller's project", async () => {
    const { client } = await googleCredentials(s.serviceAccount({ project: "caller-proj" }));
    const ai = new GoogleGenAI({ vertexai: true, project: "caller-proj", location: "europe-west4", httpOptions: { baseUrl: `${gw.url}/vertex` }, googleAuthOptions: { authClient: client } });
    await ai.models.generateContent({ model: "gemini-2.0-flash-001", contents: "hello" });
    expect(gw.passed.map((p) => [p.via, p.limitKey, p.status])).toEqual([["own", "vertex:europe-west4/gemini-2.0-flash:caller-proj", 200]]);
  });
});

describe("@ai-sdk/google-vertex", () => {
  it("Gemini: baseURL down to /publishers/google, the virtual key through googleAuthOptions.authClient or as express mode's apiKey", async () => {
    const vertex = createVertex({ baseURL: `${gw.url}/vertex/v1beta1/projects/any-project/locations/us-central1/publishers/google`, googleAuthOptions: { authClient: bearer(VK) as never } });
    const whole = await generateText({ model: vertex(GEMINI), prompt: "hello", maxRetries: 0 });
    const streamed = streamText({ model: vertex(GEMINI), prompt: "hello", maxRetries: 0 });
    await streamed.consumeStream();
    const express = createVertex({ apiKey: VK, baseURL: `${gw.url}/vertex/v1/publishers/google` });
    await generateText({ model: express(GEMINI), prompt: "hello", maxRetries: 0 });
    expect(gw.passed.map((p) => [p.via, p.header, p.path, p.status])).toEqual([
      ["virtual", "authorization", `/v1beta1/projects/any-project/locations/us-central1/publishers/google/models/${GEMINI}:generateContent`, 200],
      ["virtual", "authorization", `/v1beta1/projects/any-project/locations/us-central1/publishers/google/models/${GEMINI}:streamGenerateContent`, 200],
      ["virtual", "x-goog-api-key", `/v1/publishers/google/models/${GEMINI}:generateContent`, 200],
    ]);
    expect(whole.usage.outputTokens).toBe(5);
    expect((await streamed.usage).outputTokens).toBe(5);
    expect(counted("member-proj", GEMINI)?.answers).toBe(3);
  });

  it("Claude: baseURL down to /publishers/anthropic/models, the virtual key from generateAuthToken", async () => {
    const vertexAnthropic = createVertexAnthropic({ baseURL: `${gw.url}/vertex/v1/projects/any-project/locations/us-east5/publishers/anthropic/models`, generateAuthToken: async () => VK });
    const whole = await generateText({ model: vertexAnthropic(CLAUDE), prompt: "hello", maxRetries: 0 });
    const streamed = streamText({ model: vertexAnthropic(CLAUDE), prompt: "hello", maxRetries: 0 });
    await streamed.consumeStream();
    expect(gw.passed.map((p) => [p.via, p.path, p.status])).toEqual([
      ["virtual", `/v1/projects/any-project/locations/us-east5/publishers/anthropic/models/${CLAUDE}:rawPredict`, 200],
      ["virtual", `/v1/projects/any-project/locations/us-east5/publishers/anthropic/models/${CLAUDE}:streamRawPredict`, 200],
    ]);
    expect([whole.usage.outputTokens, (await streamed.usage).outputTokens]).toEqual([5, 5]);
  });
});

describe("the member's token, minted by the gateway, expires under the callers", () => {
  it("expired at the stand-in mid-run: the shim's 401 drops it and mints once more; no caller sees it, the limit key stays", async () => {
    const client = new AnthropicVertex({ baseURL: `${gw.url}/vertex/v1`, region: "us-east5", projectId: "any-project", authClient: bearer(VK), maxRetries: 0 });
    await client.messages.create({ model: CLAUDE, max_tokens: 32, messages: HELLO });
    s.expireTokens();
    await client.messages.create({ model: CLAUDE, max_tokens: 32, messages: HELLO });
    expect(s.stats().log.map((a) => a.status)).toEqual([200, 401, 200]);
    expect(s.stats().oauth).toMatchObject({ issued: 2, expired: 1 });
    expect(new Set(gw.passed.map((p) => `${p.status} ${p.limitKey}`))).toEqual(new Set(["200 vertex:us-east5/anthropic-claude-sonnet-4-5:member-proj"]));
  });
});
