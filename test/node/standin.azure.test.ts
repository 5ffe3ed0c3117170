// Azure OpenAI through the stand-in: the official AzureOpenAI client (openai package), the
// deployment paths, api-version, api-key, Azure's headers and errors.
import OpenAI, { AzureOpenAI } from "openai";
import { describe, expect, it } from "vitest";
import { chatBody, post, standin } from "./standin-helpers.ts";

const API_VERSION = "2024-10-21";
const azureClient = (s: Awaited<ReturnType<typeof standin>>, apiKey = "az-key-1", deployment = "mini-dep") =>
  new AzureOpenAI({ endpoint: s.url, apiKey, apiVersion: API_VERSION, deployment, maxRetries: 0 });
const azureHeaders = (key = "az-key-1") => ({ "api-key": key });
const CHAT_PATH = `/openai/deployments/mini-dep/chat/completions?api-version=${API_VERSION}`;

describe("stand-in: Azure OpenAI", () => {
  it("the AzureOpenAI client's chat completion: the model is the deployment, credential from api-key, query logged", async () => {
    // A small tokens window, so that the refill while a loaded machine answers cannot hide the charge (100,000 a minute refilled a short prompt in 12 ms).
    const s = await standin({ rpm: 600, tpm: 1_000 });
    const { data, response } = await azureClient(s).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }).withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.model).toBe("mini-dep");
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("599");
    expect(Number(response.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThan(1_000);
    // Azure sends no limit or reset headers.
    expect([...response.headers.keys()].filter((k) => /ratelimit-(limit|reset)/.test(k))).toEqual([]);
    expect(response.headers.get("apim-request-id")).toBeTruthy();
    const [attempt] = s.stats().log;
    expect(attempt).toMatchObject({
      provider: "azure", path: "/openai/deployments/mini-dep/chat/completions", query: `api-version=${API_VERSION}`,
      credential: "az-key-1", credentialHeader: "api-key", model: "mini-dep", outcome: "success",
    });
  });

  it("streams and embeddings parse with the AzureOpenAI client", async () => {
    const s = await standin({ outputTokens: 6 });
    const stream = await azureClient(s).chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text.split(" ")).toHaveLength(6);
    const emb = await azureClient(s, "az-key-1", "embed-dep").embeddings.create({ model: "x", input: ["a", "b"] });
    expect(emb.data).toHaveLength(2);
    expect(emb.model).toBe("embed-dep");
    expect(s.stats().log.map((a) => a.path)).toEqual(["/openai/deployments/mini-dep/chat/completions", "/openai/deployments/embed-dep/embeddings"]);
  });

  it("without api-version: 400 like Azure, and nothing is taken from the buckets", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 } });
    const res = await post(s, "/openai/deployments/mini-dep/chat/completions", { messages: [{ role: "user", content: "hi" }] }, azureHeaders());
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: "BadRequest", message: "Missing required query parameter: api-version" } });
    expect((await post(s, CHAT_PATH, { messages: [{ role: "user", content: "hi" }] }, azureHeaders())).status).toBe(200);
    const missing = await post(s, CHAT_PATH, { model: "x" }, azureHeaders());
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { message: "Missing required parameter: 'messages'." } });
  });

  it("429: Azure's body with retry-after and the remaining headers; the SDK raises RateLimitError", async () => {
    const s = await standin({ rpm: 60, burst: { requests: 1 }, keyLimits: { "az-key-2": { rpm: 120, burst: { requests: 2 } } } });
    const client = azureClient(s);
    await client.chat.completions.create(chatBody());
    const e = await client.chat.completions.create(chatBody()).then(() => null, (err: unknown) => err);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    const err = e as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err.headers?.get("retry-after")).toBe("1");
    expect(err.headers?.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(err.error).toMatchObject({ code: "429", message: expect.stringMatching(/exceeded call rate limit .* Please retry after 1 seconds/) });
    // Another key of the same resource has a bucket (and a plan) of its own.
    const other = azureClient(s, "az-key-2");
    await other.chat.completions.create(chatBody());
    await expect(other.chat.completions.create(chatBody())).resolves.toBeTruthy();
    expect(s.stats().byCredential).toMatchObject({ "az-key-1": { successes: 1, rateLimited: 1 }, "az-key-2": { successes: 2 } });
  });

  it("a quota-exhausted key gets OpenAI's insufficient_quota; a missing key Azure's 401; an unknown path Azure's 404", async () => {
    const s = await standin({ quotaExhaustedKeys: ["az-broke"] });
    const e = await azureClient(s, "az-broke").chat.completions.create(chatBody()).then(() => null, (err: unknown) => err);
    expect((e as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("insufficient_quota");
    const none = await post(s, CHAT_PATH, { messages: [] }, {});
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: "401", message: expect.stringMatching(/^Access denied/) } });
    const bearer = await post(s, CHAT_PATH, { messages: [] }, { authorization: "Bearer entra-token" });
    expect(bearer.status).toBe(200);
    expect(s.stats().log.at(-1)).toMatchObject({ credential: "entra-token", credentialHeader: "authorization", extraCredentials: [] });
    // A credential left beside the one used (a gateway that forgot to strip it) is logged.
    await post(s, CHAT_PATH, { messages: [] }, { ...azureHeaders("az-used"), authorization: "Bearer sgk-left-over" });
    expect(s.stats().log.at(-1)).toMatchObject({ credential: "az-used", credentialHeader: "api-key", extraCredentials: ["sgk-left-over"] });
    const unknown = await post(s, "/openai/deployments/mini-dep/images/generations?api-version=1", {}, azureHeaders());
    expect(unknown.status).toBe(404);
  });
});
