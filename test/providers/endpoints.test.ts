import { describe, expect, it } from "vitest";
import { allowed, DEFAULT_SCOPES, isInference, scopeOf } from "../../src/providers/endpoints";

describe("which endpoint group a request falls in", () => {
  it("OpenAI-style: generation and embeddings are inference, by method as well as path", () => {
    expect(scopeOf("openai", "POST", "/v1/chat/completions")).toBe("inference");
    expect(scopeOf("openai", "post", "/v1/responses")).toBe("inference");
    expect(scopeOf("openai", "POST", "/v1/responses/input_tokens")).toBe("inference");
    expect(scopeOf("openai", "POST", "/v1/embeddings")).toBe("inference");
    expect(scopeOf("openai", "POST", "/v1/completions")).toBe("inference");
    // DeepSeek's and Groq's paths: the base URL holds (or needs no) `/v1`.
    expect(scopeOf("openai", "POST", "/chat/completions")).toBe("inference");
    // Listing stored chat completions is a GET on the same path: the account's data, not inference.
    expect(scopeOf("openai", "GET", "/v1/chat/completions")).toBe("stored");
    expect(scopeOf("openai", "GET", "/v1/chat/completions/chatcmpl-1/messages")).toBe("stored");
    expect(scopeOf("openai", "GET", "/v1/responses/resp_1")).toBe("stored");
    expect(scopeOf("openai", "DELETE", "/v1/responses/resp_1")).toBe("stored");
    expect(scopeOf("openai", "GET", "/v1/models")).toBe("models");
    expect(scopeOf("openai", "GET", "/v1/models/gpt-4o-mini")).toBe("models");
    // Deleting a fine-tuned model is not listing models.
    expect(scopeOf("openai", "DELETE", "/v1/models/ft:gpt-4o-mini:org::abc")).toBeNull();
    expect(scopeOf("openai", "GET", "/v1/files")).toBe("files");
    expect(scopeOf("openai", "GET", "/v1/files/file-1/content")).toBe("files");
    expect(scopeOf("openai", "DELETE", "/v1/files/file-1")).toBe("files");
    expect(scopeOf("openai", "POST", "/v1/batches")).toBe("batches");
    expect(scopeOf("openai", "POST", "/v1/fine_tuning/jobs")).toBe("fine_tuning");
    expect(scopeOf("openai", "POST", "/v1/moderations")).toBe("moderations");
    expect(scopeOf("openai", "POST", "/v1/audio/transcriptions")).toBe("audio");
    expect(scopeOf("openai", "POST", "/v1/images/generations")).toBe("images");
    expect(scopeOf("openai", "GET", "/v1/organization/users")).toBeNull();
    expect(scopeOf("openai", "POST", "/v1/assistants")).toBeNull();
  });

  it("Anthropic: messages and token counts are inference; batches and files are not", () => {
    expect(scopeOf("anthropic", "POST", "/v1/messages")).toBe("inference");
    expect(scopeOf("anthropic", "POST", "/v1/messages/count_tokens")).toBe("inference");
    expect(scopeOf("anthropic", "GET", "/v1/messages/batches")).toBe("batches");
    expect(scopeOf("anthropic", "POST", "/v1/messages/batches")).toBe("batches");
    expect(scopeOf("anthropic", "GET", "/v1/files")).toBe("files");
    expect(scopeOf("anthropic", "GET", "/v1/models")).toBe("models");
    expect(scopeOf("anthropic", "GET", "/v1/organizations/me")).toBeNull();
  });

  it("Gemini: generate, stream, count and embed are inference; batch generation and files are not", () => {
    for (const verb of ["generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"])
      expect(scopeOf("gemini", "POST", `/v1beta/models/gemini-2.0-flash:${verb}`)).toBe("inference");
    expect(scopeOf("gemini", "POST", "/v1/models/gemini-2.0-flash:generateContent")).toBe("inference");
    expect(scopeOf("gemini", "POST", "/v1beta/models/gemini-2.0-flash:batchGenerateContent")).toBe("batches");
    expect(scopeOf("gemini", "GET", "/v1beta/files")).toBe("files");
    expect(scopeOf("gemini", "POST", "/upload/v1beta/files")).toBe("files");
    expect(scopeOf("gemini", "GET", "/v1beta/models")).toBe("models");
    expect(scopeOf("gemini", "POST", "/v1beta/tunedModels/x:generateContent")).toBeNull();
  });

  it("Azure: deployment and v1 paths, with the route's resource segment or without", () => {
    expect(scopeOf("azure", "POST", "/myres/openai/deployments/mini/chat/completions")).toBe("inference");
    expect(scopeOf("azure", "POST", "/openai/deployments/mini/embeddings")).toBe("inference");
    expect(scopeOf("azure", "POST", "/myres/openai/v1/responses")).toBe("inference");
    expect(scopeOf("azure", "GET", "/myres/openai/files")).toBe("files");
    expect(scopeOf("azure", "GET", "/myres/openai/deployments/mini/chat/completions")).toBeNull();
  });

  it("a near miss is not inference: trailing slash, other case, a longer path", () => {
    expect(scopeOf("openai", "POST", "/v1/chat/completions/")).toBe("stored");
    expect(scopeOf("openai", "POST", "/V1/chat/completions")).toBeNull();
    expect(scopeOf("openai", "POST", "/v1/embeddings/x")).toBeNull();
    expect(scopeOf("anthropic", "POST", "/v1/messagesx")).toBeNull();
  });
});

describe("what a key's scopes let through", () => {
  it("by default: inference and the models list, nothing of the account", () => {
    expect(allowed(DEFAULT_SCOPES, "openai", "POST", "/v1/chat/completions")).toBe(true);
    expect(allowed(DEFAULT_SCOPES, "openai", "GET", "/v1/models")).toBe(true);
    for (const [m, p] of [["GET", "/v1/files"], ["GET", "/v1/chat/completions"], ["POST", "/v1/fine_tuning/jobs"], ["DELETE", "/v1/files/file-1"], ["POST", "/v1/batches"], ["GET", "/v1/organization/users"]] as const)
      expect(allowed(DEFAULT_SCOPES, "openai", m, p), `${m} ${p}`).toBe(false);
    expect(allowed(DEFAULT_SCOPES, "anthropic", "GET", "/v1/messages/batches")).toBe(false);
  });

  it("a named scope adds its group and nothing else; `all` is anything", () => {
    expect(allowed(["inference", "files"], "openai", "GET", "/v1/files")).toBe(true);
    expect(allowed(["inference", "files"], "openai", "POST", "/v1/batches")).toBe(false);
    expect(allowed(["files"], "openai", "POST", "/v1/chat/completions")).toBe(false);
    expect(allowed(["all"], "openai", "GET", "/v1/organization/users")).toBe(true);
  });

  it("only POSTed generations are cacheable inference", () => {
    expect(isInference("openai", "POST", "/v1/chat/completions")).toBe(true);
    expect(isInference("openai", "POST", "/v1/batches")).toBe(false);
    expect(isInference("openai", "GET", "/v1/models")).toBe(false);
  });
});
