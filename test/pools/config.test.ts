import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env";
import { poolsOf } from "../../src/pools/config";
import { memberRequest, virtualKeyIn } from "../../src/pools/member";
import { providers } from "../../src/providers/registry";

const table = providers("{}");
const SECRETS = { KEY_A: "sk-secret-value-aaaa", KEY_B: "sk-secret-value-bbbb", AZ: "az-secret-value" };
const parse = (raw: unknown, env: object = { ...SECRETS }) => poolsOf(typeof raw === "string" ? raw : JSON.stringify(raw), table, env);
const refusal = (raw: unknown, env?: object) => {
  try {
    parse(raw, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("accepted");
};

describe("POOLS", () => {
  it("reads pools and finds each member's key in the secret it names", () => {
    const pools = parse({ main: { provider: "openai", members: [{ name: "a", secret: "KEY_A" }, { name: "b", secret: "KEY_B" }] } });
    expect(pools.main!.members.map((m) => [m.name, m.secret, m.credential, m.provider.name])).toEqual([
      ["a", "KEY_A", "sk-secret-value-aaaa", "openai"],
      ["b", "KEY_B", "sk-secret-value-bbbb", "openai"],
    ]);
  });

  it("a missing secret is named, its value never shown", () => {
    const msg = refusal({ main: { provider: "openai", members: [{ name: "a", secret: "KEY_A" }, { name: "b", secret: "NOT_SET" }] } });
    expect(msg).toContain("NOT_SET");
    expect(msg).toContain("members[1]");
    expect(msg).not.toContain("sk-secret-value");
  });

  it("names the field of a malformed pool", () => {
    expect(refusal("{nope")).toBe("POOLS is not valid JSON");
    expect(refusal({ main: { provider: "nope", members: [{ name: "a", secret: "KEY_A" }] } })).toContain("POOLS.main.provider");
    expect(refusal({ main: { provider: "openai", members: [] } })).toContain("POOLS.main.members");
    expect(refusal({ main: { provider: "openai", members: [{ name: "a", secret: "KEY_A" }, { name: "a", secret: "KEY_B" }] } })).toContain("used twice");
    expect(refusal({ main: { provider: "openai", members: [{ name: "a", secret: "ADMIN_TOKEN" }] } }, { ADMIN_TOKEN: "x" })).toContain("members[0].secret");
    expect(refusal({ main: { provider: "anthropic", members: [{ name: "a", provider: "openai", secret: "KEY_A" }] } })).toContain("wire format");
    expect(refusal({ main: { provider: "openai", members: [{ name: "z", provider: "azure", secret: "AZ", deployments: { m: "d" } }] } })).toContain("resource");
    expect(refusal({ main: { provider: "openai", members: [{ name: "z", provider: "azure", resource: "r", secret: "AZ" }] } })).toContain("deployments");
  });

  it("an Azure member in an OpenAI pool: its deployment, api-version and api-key", async () => {
    const pools = parse({ main: { provider: "openai", members: [{ name: "z", provider: "azure", resource: "MyRes", deployments: { "gpt-4o-mini": "mini-dep" }, secret: "AZ" }] } });
    const m = pools.main!.members[0]!;
    const caller = new Headers({ authorization: "Bearer sgk-virtual", "openai-project": "p", "content-type": "application/json" });
    const req = (await memberRequest(m, { rest: "/v1/chat/completions", search: "?key=sgk-x&foo=1", headers: caller, json: { model: "gpt-4o-mini" }, family: "openai" }))!;
    expect(req.url.href).toBe("https://myres.openai.azure.com/openai/deployments/mini-dep/chat/completions?foo=1&api-version=2024-10-21");
    expect(req.headers.get("api-key")).toBe("az-secret-value");
    expect(req.headers.get("authorization")).toBeNull();
    expect(req.headers.get("openai-project")).toBeNull();
    expect(req.headers.get("content-type")).toBe("application/json");
    expect(req.key.key).toMatch(/^azure:myres\/mini-dep:[0-9a-f]{16}$/);
    expect(await memberRequest(m, { rest: "/v1/chat/completions", search: "", headers: caller, json: { model: "gpt-4o" }, family: "openai" })).toBeNull();
  });

  it("a member's limiter key is the one a caller holding its key shares", async () => {
    const pools = parse({ main: { provider: "openai", members: [{ name: "a", secret: "KEY_A" }] } });
    const req = (await memberRequest(pools.main!.members[0]!, { rest: "/v1/chat/completions", search: "", headers: new Headers({ authorization: "Bearer sgk-v" }), json: { model: "gpt-4o-mini" }, family: "openai" }))!;
    expect(req.headers.get("authorization")).toBe("Bearer sk-secret-value-aaaa");
    const { limitKey } = await import("../../src/providers/key");
    const own = await limitKey(table.openai!, new Headers({ authorization: "Bearer sk-secret-value-aaaa" }), new URL("https://x/v1"), "/v1/chat/completions", { model: "gpt-4o-mini" }, null);
    expect(req.key.key).toBe(own.key);
  });

  it("finds a virtual key wherever an SDK puts a provider key", () => {
    const u = new URL("https://gw/openai/v1");
    expect(virtualKeyIn(new Headers({ authorization: "Bearer sgk-abc" }), u)).toBe("sgk-abc");
    expect(virtualKeyIn(new Headers({ "x-api-key": "sgk-abc" }), u)).toBe("sgk-abc");
    expect(virtualKeyIn(new Headers({ "api-key": "sgk-abc" }), u)).toBe("sgk-abc");
    expect(virtualKeyIn(new Headers({ "x-goog-api-key": "sgk-abc" }), u)).toBe("sgk-abc");
    expect(virtualKeyIn(new Headers(), new URL("https://gw/gemini/v1?key=sgk-abc"))).toBe("sgk-abc");
    expect(virtualKeyIn(new Headers({ authorization: "Bearer sk-real" }), u)).toBeNull();
  });
});
