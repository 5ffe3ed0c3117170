// The batch command reads the provider rows (issue 40 item 2): the URLs a line may name, the batch
// APIs and their limits, the credentials and headers it sends, and the help that states them.
import { describe, expect, test } from "vitest";
import { HELP } from "../../../src/cli/help.ts";
import { apiFor, lineBytes, planChunks } from "../../../src/cli/job/plan.ts";
import { authHeaders, BATCH_PROVIDERS, knownUrl, knownUrls } from "../../../src/cli/providers.ts";
import type { Item } from "../../../src/cli/input.ts";
import { BATCH_APIS, batchApiOf, DEFAULT_LINE_PROVIDER } from "../../../src/providers/lines.ts";

const item = (provider: string, url: string, customId: string, model = "m"): Item => ({
  line: 1, customId, provider, url, body: { model }, payload: JSON.stringify({ model }), model,
});

describe("the batch command's rows", () => {
  test("the providers a line may name: every built-in with a fixed origin", () => {
    expect(BATCH_PROVIDERS).toEqual(["openai", "anthropic", "gemini", "groq", "mistral", "openrouter", "deepseek", "together", "fireworks", "xai"]);
    expect(DEFAULT_LINE_PROVIDER).toBe("openai");
  });

  test("the URLs a line may name: a provider's own list, Gemini's native paths by pattern, else the OpenAI-compatible routes", () => {
    expect(knownUrl("openai", "/v1/responses")).toBe(true);
    expect(knownUrl("groq", "/v1/responses")).toBe(false);
    expect(knownUrl("groq", "/v1/chat/completions")).toBe(true);
    expect(knownUrl("anthropic", "/v1/chat/completions")).toBe(false);
    expect(knownUrl("gemini", "/v1beta/models/gemini-2.5-flash:generateContent")).toBe(true);
    expect(knownUrl("gemini", "/v1beta/models/a/b:generateContent")).toBe(false);
    expect(knownUrls("gemini")).toEqual(["/v1beta/openai/chat/completions", "/v1beta/openai/embeddings", "/v1beta/models/<model>:generateContent"]);
  });

  test("credentials as each family sends them, with the headers its requests carry; Gemini's OpenAI-compatible routes take a bearer", () => {
    expect(authHeaders("openai", "/v1/chat/completions", "k")).toEqual({ authorization: "Bearer k" });
    expect(authHeaders("groq", "/v1/chat/completions", "k")).toEqual({ authorization: "Bearer k" });
    expect(authHeaders("anthropic", "/v1/messages", "k")).toEqual({ "x-api-key": "k", "anthropic-version": "2023-06-01" });
    expect(authHeaders("gemini", "/v1beta/models/x:generateContent", "k")).toEqual({ "x-goog-api-key": "k" });
    expect(authHeaders("gemini", "/v1beta/openai/chat/completions", "k")).toEqual({ authorization: "Bearer k" });
  });

  test("the batch API a line goes to, and how its chunks are cut as the API's row says", () => {
    expect(batchApiOf("openai", "/v1/embeddings")).toBe("openai");
    expect(batchApiOf("openai", "/v1/messages")).toBeNull();
    expect(batchApiOf("anthropic", "/v1/messages")).toBe("anthropic");
    expect(batchApiOf("groq", "/v1/chat/completions")).toBeNull();
    expect(batchApiOf("constructor", "/v1/messages")).toBeNull();
    // A file line carries its url and method; an inline one only its params.
    const o = item("openai", "/v1/chat/completions", "a");
    const a = item("anthropic", "/v1/messages", "a");
    expect(lineBytes("openai", o) - lineBytes("anthropic", a)).toBe(Buffer.byteLength(o.url) + 48 - 28);
    const plans = planChunks(
      [item("openai", "/v1/chat/completions", "1", "x"), item("openai", "/v1/chat/completions", "2", "y"), item("anthropic", "/v1/messages", "ok", "x"), item("anthropic", "/v1/messages", "not ok!", "y")],
      (api) => BATCH_APIS[api].limits,
      0,
    );
    // One model a file batch; any models inline, with line indexes for ids the API would refuse.
    expect(plans.map((p) => [p.api, p.model, p.ids, p.indexIds ?? false])).toEqual([
      ["openai", "x", ["1"], false], ["openai", "y", ["2"], false], ["anthropic", "*", ["ok", "not ok!"], true],
    ]);
    expect(apiFor(item("gemini", "/v1beta/openai/chat/completions", "g"))).toBeNull();
  });

  test("the help states the rows' facts where it always stated them", () => {
    expect(HELP).toContain('Sends every line of an OpenAI Batch API file ({"custom_id", "method", "url", "body"}) through the\nlimiter and appends one OpenAI batch output line per request as it finishes. No item is lost:\n');
    expect(HELP).toContain("  --provider NAME     provider of lines that name none (default openai): openai, anthropic, gemini, groq,");
    expect(HELP).toContain("sell it\n                      (OpenAI: half price; Gemini: half; Groq: higher limits), waiting through\n");
    expect(HELP).toContain("batch API (OpenAI chat\n                      completions, embeddings, completions and responses; Anthropic messages), at\n");
    expect(HELP).toContain("  --batch-lines N     provider/auto: most lines per batch (default the provider's: 50,000 OpenAI,\n                      100,000 Anthropic)\n");
    expect(HELP).toContain("Credentials come from the environment only: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY,");
  });
});
