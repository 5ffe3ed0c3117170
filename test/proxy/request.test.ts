// What the gateway reads of a request body before it queues (src/proxy/request.ts describe): each
// estimate as the route and the key's provider row make it.
import { describe as suite, expect, it } from "vitest";
import { DEFAULT_OUTPUT_TOKENS } from "../../src/policy/estimate";
import { IMAGE_TOKENS } from "../../src/policy/media";
import { describe } from "../../src/proxy/request";
import { providers } from "../../src/providers/registry";
import { priceOf, priceTable } from "../../src/usage/prices";

const table = providers("{}");
const read = (provider: string, rest: string, body: object, headers: Record<string, string> = { authorization: "Bearer sk-a" }) => {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  return describe(table[provider]!, new Headers(headers), new URL(`http://gw/${provider}${rest}`), rest, bytes, body, null);
};

suite("describe: the estimate by route and row", () => {
  it("an embedding is charged its input alone; the same body as a chat, its default output besides", async () => {
    const body = { model: "text-embedding-3-small", input: "a passage of a corpus" };
    const embedding = await read("openai", "/v1/embeddings", body);
    expect(embedding).toMatchObject({ out: 0, cost: Math.ceil(JSON.stringify(body).length / 4) });
    expect((await read("openai", "/v1/chat/completions", body)).out).toBe(DEFAULT_OUTPUT_TOKENS);
    const gemini = await read("gemini", "/v1beta/models/gemini-embedding-001:embedContent", { content: { parts: [{ text: "a passage" }] } }, { "x-goog-api-key": "g" });
    expect(gemini.out).toBe(0);
  });

  it("a token count: one request on a key of its own, no tokens", async () => {
    const body = { model: "claude-sonnet-4-5", messages: [{ role: "user", content: "x".repeat(4_000) }] };
    const count = await read("anthropic", "/v1/messages/count_tokens", body, { "x-api-key": "sk-ant" });
    const message = await read("anthropic", "/v1/messages", { ...body, max_tokens: 64 }, { "x-api-key": "sk-ant" });
    expect(count).toMatchObject({ cost: 1, out: 0 });
    expect(count.key.key).toBe(message.key.key.replace(":claude-sonnet-4-5:", ":claude-sonnet-4-5~count:"));
    expect(message.cost).toBeGreaterThan(1_000);
  });

  it("n answers charge the output limit n times; a picture by URL at its row's count (OpenAI 800, Anthropic the most)", async () => {
    expect((await read("openai", "/v1/chat/completions", { model: "gpt-4o", max_tokens: 100, n: 5, messages: [] })).out).toBe(500);
    const picture = (url: string) => [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }];
    const openai = await read("openai", "/v1/chat/completions", { model: "gpt-4o", max_tokens: 0, messages: picture("https://example.com/a.png") });
    expect(openai.cost - openai.out).toBeGreaterThan(800);
    expect(openai.cost - openai.out).toBeLessThan(800 + 50);
    const claude = { model: "claude-sonnet-4-5", max_tokens: 0, messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] }] };
    const anthropic = await read("anthropic", "/v1/messages", claude, { "x-api-key": "sk-ant" });
    expect(anthropic.cost).toBeGreaterThan(IMAGE_TOKENS);
    expect(anthropic.cost).toBeLessThan(IMAGE_TOKENS + 50);
  });

  it("a Bedrock body that names no output limit is charged the model's whole output, as Bedrock reserves it; one that names one, that", async () => {
    const model = "us.anthropic.claude-haiku-4-5-20251001-v1:0";
    const rest = `/us-east-1/model/${encodeURIComponent(model)}/converse`;
    const prices = priceTable(undefined);
    const at = (body: object, provider = "bedrock", path = rest, m = model) => {
      const p = path.replace(encodeURIComponent(model), encodeURIComponent(m));
      return describe(table[provider]!, new Headers({ authorization: "Bearer ABSKkey" }), new URL(`http://gw/${provider}${p}`), p, new TextEncoder().encode(JSON.stringify(body)), body, null, undefined, prices);
    };
    const messages = [{ role: "user", content: [{ text: "hi" }] }];
    // Its maxOutput in the built-in table (the inference profile's base model's).
    expect(priceOf(prices, "bedrock", model)?.maxOutput).toBe(64_000);
    expect((await at({ messages })).out).toBe(64_000);
    expect((await at({ messages, inferenceConfig: { maxTokens: 300 } })).out).toBe(300);
    // A model the price table does not know: the default.
    expect((await at({ messages }, "bedrock", rest, "us.example.house-model-v1:0")).out).toBe(DEFAULT_OUTPUT_TOKENS);
    // Another row never reads it: its providers reserve no model's whole output.
    expect((await at({ model: "gpt-4o", messages: [] }, "openai", "/v1/chat/completions")).out).toBe(DEFAULT_OUTPUT_TOKENS);
  });
});
