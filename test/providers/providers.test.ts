import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env";
import { LABEL, limitKey, priceName } from "../../src/providers/key";
import { providers } from "../../src/providers/registry";
import { upstreamUrl } from "../../src/providers/url";

const table = providers("{}");
const url = (name: string, rest: string, search = "") => upstreamUrl(table[name]!, rest, search)?.toString() ?? null;

describe("upstreamUrl", () => {
  it.each([
    ["openai", "/v1/chat/completions", "https://api.openai.com/v1/chat/completions"],
    ["anthropic", "/v1/messages", "https://api.anthropic.com/v1/messages"],
    ["gemini", "/v1beta/models/gemini-2.5-flash:generateContent", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"],
    ["groq", "/v1/chat/completions", "https://api.groq.com/openai/v1/chat/completions"],
    ["mistral", "/v1/chat/completions", "https://api.mistral.ai/v1/chat/completions"],
    ["openrouter", "/v1/chat/completions", "https://openrouter.ai/api/v1/chat/completions"],
    ["deepseek", "/chat/completions", "https://api.deepseek.com/chat/completions"],
    ["together", "/v1/chat/completions", "https://api.together.xyz/v1/chat/completions"],
    ["fireworks", "/v1/chat/completions", "https://api.fireworks.ai/inference/v1/chat/completions"],
    ["xai", "/v1/chat/completions", "https://api.x.ai/v1/chat/completions"],
    ["azure", "/myres/openai/deployments/gpt4o/chat/completions", "https://myres.openai.azure.com/openai/deployments/gpt4o/chat/completions"],
  ])("%s%s", (name, rest, expected) => {
    expect(url(name, rest)).toBe(expected);
  });

  it("keeps the query", () => {
    expect(url("azure", "/r1/openai/deployments/d/chat/completions", "?api-version=2024-10-21")).toBe(
      "https://r1.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21",
    );
  });

  it.each([
    ["openai", "/v1/../../admin"],
    ["openai", "/v1/..%2F..%2Fadmin"],
    ["openai", "/v1/%2e%2e/x"],
    ["openai", "/v1/a%5Cb"],
    ["openai", "/v1\\..\\x"],
    ["azure", "/evil.com%2F/openai"],
    ["azure", "/a.b/openai"],
    ["azure", "/"],
  ])("refuses %s %s, which could leave the base URL", (name, rest) => {
    expect(url(name, rest)).toBeNull();
  });

  it("never lets the caller pick the host", () => {
    expect(url("openai", "//evil.example/v1")).toBeNull();
    expect(url("openai", "/@evil.example/v1")).toBe("https://api.openai.com/@evil.example/v1");
  });
});

describe("providers()", () => {
  it("adds and overrides providers, keeping the built-ins' flavour", () => {
    const t = providers({ openai: { baseUrl: "http://127.0.0.1:9100/" }, local: { baseUrl: "http://10.0.0.5:8000", headers: "anthropic" } });
    expect(t.openai).toEqual({ name: "openai", baseUrl: "http://127.0.0.1:9100", flavour: "openai", dialect: "openai" });
    expect(t.local).toEqual({ name: "local", baseUrl: "http://10.0.0.5:8000", flavour: "anthropic", dialect: "generic" });
    expect(t.anthropic!.baseUrl).toBe("https://api.anthropic.com");
  });

  it.each([
    ['{"Bad Name":{"baseUrl":"http://a"}}'],
    ['{"x":{"baseUrl":"http://user:pw@a"}}'],
    ['{"x":{"baseUrl":"http://a?q=1"}}'],
    ['{"x":"http://a"}'],
    ['{"x":{}}'],
  ])("refuses %s with a ConfigError", (raw) => {
    expect(() => providers(raw)).toThrow(ConfigError);
  });

  it("treats an empty or null PROVIDERS as no overrides", () => {
    expect(providers("").openai!.baseUrl).toBe("https://api.openai.com");
    expect(providers("null").openai!.baseUrl).toBe("https://api.openai.com");
  });
});

describe("limitKey", () => {
  const h = (o: Record<string, string>) => new Headers(o);
  const u = (s: string) => new URL(`http://gw${s}`);

  it("takes the model from the body, Gemini's path or Azure's deployment", async () => {
    expect((await limitKey(table.openai!, h({ authorization: "Bearer a" }), u("/openai/v1/chat/completions"), "/v1/chat/completions", { model: "gpt-4o" }, null)).model).toBe("gpt-4o");
    expect((await limitKey(table.gemini!, h({ "x-goog-api-key": "g" }), u("/gemini/x"), "/v1beta/models/gemini-2.5-pro:streamGenerateContent", null, null)).model).toBe("gemini-2.5-pro");
    expect((await limitKey(table.azure!, h({ "api-key": "z" }), u("/azure/x"), "/res/openai/deployments/my-gpt/chat/completions", { model: "ignored" }, null)).model).toBe("res/my-gpt");
    expect((await limitKey(table.openai!, h({}), u("/openai/x"), "/v1/files", null, null)).model).toBe("*");
  });

  it("hashes Gemini's ?key= credential, and scope headers, into the key", async () => {
    const k1 = await limitKey(table.gemini!, h({}), u("/gemini/m?key=AIza1"), "/v1beta/models/g:generateContent", null, null);
    const k2 = await limitKey(table.gemini!, h({}), u("/gemini/m?key=AIza2"), "/v1beta/models/g:generateContent", null, null);
    expect(k1.credentialHash).not.toBe(k2.credentialHash);
    const o1 = await limitKey(table.openai!, h({ authorization: "Bearer a", "openai-organization": "org-1" }), u("/x"), "/v1", { model: "m" }, null);
    const o2 = await limitKey(table.openai!, h({ authorization: "Bearer a", "openai-organization": "org-2" }), u("/x"), "/v1", { model: "m" }, null);
    expect(o1.key).not.toBe(o2.key);
    expect(o1.key).toMatch(/^openai:m:[0-9a-f]{16}$/);
  });

  it("Vertex: by location and base model; the token's hash until the path's project is proven for it, the project's after", async () => {
    const path = "/v1/projects/team-a/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict";
    const proven = new Set<string>();
    const key = (token: string, url = "/vertex/x", p = path) => limitKey(table.vertex!, h(token ? { authorization: `Bearer ${token}` } : {}), u(url), p, null, null, (hash, id) => proven.has(`${hash} ${id}`));
    const a = await key("ya29.a");
    expect(a.model).toBe("us-east5/claude-sonnet-4-5");
    expect(a.identity).toBe("team-a");
    const b = await key("ya29.b");
    expect(a.key).not.toBe(b.key);
    proven.add(`${a.credentialHash} team-a`);
    proven.add(`${b.credentialHash} team-a`);
    const [pa, pb] = [await key("ya29.a"), await key("ya29.b")];
    expect(pa.key).toBe(pb.key);
    expect(pa.key).not.toBe(a.key);
    expect(pa.credentialHash, "its own hash still names the credential (labels, cache)").toBe(a.credentialHash);
    // Proven for team-a says nothing of team-b.
    expect((await key("ya29.a", "/vertex/x", path.replace("team-a", "team-b"))).key).not.toBe(pa.key);
    // A token in Google's query parameters is a credential of its own: never the empty one another request proved.
    const [none, q1, q2] = [await key(""), await key("", "/vertex/x?access_token=ya29.a"), await key("", "/vertex/x?key=AIza1")];
    expect(new Set([none.credentialHash, q1.credentialHash, q2.credentialHash]).size).toBe(3);
    // Express mode's path names no project: always the credential's own.
    expect((await key("ya29.a", "/vertex/x", "/v1/publishers/google/models/gemini-2.5-flash-001:generateContent")).identity).toBeNull();
  });

  it("a token count has a key of its own, the generation's with ~count after its model part: its limits are apart from generation's", async () => {
    const both = async (p: keyof typeof table, headers: Record<string, string>, gen: string, count: string, body: unknown, label: string | null = null) =>
      [await limitKey(table[p]!, h(headers), u("/x"), gen, body, label), await limitKey(table[p]!, h(headers), u("/x"), count, body, label)] as const;
    const pairs = [
      await both("anthropic", { "x-api-key": "sk-ant" }, "/v1/messages", "/v1/messages/count_tokens", { model: "claude-sonnet-4-5" }),
      await both("anthropic", { "x-api-key": "sk-ant" }, "/v1/messages", "/v1/messages/count_tokens", { model: "claude-sonnet-4-5" }, "team-evals"),
      await both("openai", { authorization: "Bearer a" }, "/v1/responses", "/v1/responses/input_tokens", { model: "gpt-5" }),
      await both("gemini", { "x-goog-api-key": "g" }, "/v1beta/models/gemini-2.5-pro:generateContent", "/v1beta/models/gemini-2.5-pro:countTokens", null),
    ];
    for (const [gen, count] of pairs) {
      expect(count.key).toBe(gen.key.replace(`:${gen.model}:`, `:${gen.model}~count:`));
      expect(count.credentialHash).toBe(gen.credentialHash);
    }
    const claude = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict";
    expect((await limitKey(table.vertex!, h({ authorization: "Bearer ya29.a" }), u("/vertex/x"), claude, null, null)).model).toBe("us-east5/count-tokens~count");
    // No label can name a count's key: `~` is not a label's.
    expect(LABEL.test("claude~count")).toBe(false);
  });

  it("a label replaces only the model part", async () => {
    const k = await limitKey(table.anthropic!, h({ "x-api-key": "sk-ant" }), u("/x"), "/v1/messages", { model: "claude" }, "team-evals");
    expect(k.key).toMatch(/^anthropic:team-evals:[0-9a-f]{16}$/);
  });

  it("priceName: Vertex's answers as <location>/<model as sent>, a label's too; other rows (Bedrock's region, Azure's resource) as the model", async () => {
    const claude = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict";
    const k = await limitKey(table.vertex!, h({ authorization: "Bearer ya29.a" }), u("/vertex/x"), claude, null, null);
    expect(priceName(table.vertex!, k.model, "claude-sonnet-4-5@20250929")).toBe("us-east5/claude-sonnet-4-5@20250929");
    const labelled = await limitKey(table.vertex!, h({ authorization: "Bearer ya29.a" }), u("/vertex/x"), claude.replace("us-east5", "global"), null, "evals");
    expect(priceName(table.vertex!, labelled.model, "claude-sonnet-4-5@20250929")).toBe("global/claude-sonnet-4-5@20250929");
    const express = await limitKey(table.vertex!, h({ authorization: "Bearer ya29.a" }), u("/vertex/x"), "/v1/publishers/google/models/gemini-2.5-flash:generateContent", null, null);
    expect(priceName(table.vertex!, express.model, "gemini-2.5-flash")).toBe("global/gemini-2.5-flash");
    expect(priceName(table.bedrock!, "us-east-1/anthropic.claude-haiku-4-5-20251001-v1:0", "anthropic.claude-haiku-4-5-20251001-v1:0")).toBe("anthropic.claude-haiku-4-5-20251001-v1:0");
    expect(priceName(table.azure!, "res/my-gpt", "gpt-4o")).toBe("gpt-4o");
  });
});
