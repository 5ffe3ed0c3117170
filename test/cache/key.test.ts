import { describe, expect, it } from "vitest";
import { cacheKey, canonicalJson, type KeyInput, keyMaterial, semanticHeaders, SHARDS, shardOf } from "../../src/cache/key";

const body = { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }], max_tokens: 16 };
const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const input = (o: Partial<KeyInput> = {}): KeyInput => ({
  provider: "openai", method: "POST", path: "/v1/chat/completions", tenant: "0123456789abcdef", namespace: "default", sample: 0,
  headers: [], body: enc(body), json: body, ...o,
});

describe("canonicalJson", () => {
  it("sorts keys at every depth, keeps array order, drops undefined like JSON does", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson({ a: undefined, b: "x" })).toBe('{"b":"x"}');
    expect(canonicalJson([undefined, 1])).toBe("[null,1]");
    expect(canonicalJson("é\n")).toBe(JSON.stringify("é\n"));
  });
});

describe("cacheKey", () => {
  it("is 64 hex digits and the same for the same request, whatever the key order or spacing", async () => {
    const k = await cacheKey(input());
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    const reordered = { max_tokens: 16, messages: [{ content: "hi", role: "user" }], model: "gpt-4o-mini" };
    expect(await cacheKey(input({ json: reordered, body: new TextEncoder().encode(JSON.stringify(reordered, null, 2)) }))).toBe(k);
  });

  it("changes with every part: provider, method, path, query, tenant, namespace, sample, body fields", async () => {
    const base = await cacheKey(input());
    const variants: Partial<KeyInput>[] = [
      { provider: "groq" }, { method: "PUT" }, { path: "/v1/responses" }, { path: "/v1/chat/completions?x=1" },
      { tenant: "fedcba9876543210" }, { namespace: "run-2" }, { sample: 1 },
      { json: { ...body, max_tokens: 17 } }, { json: { ...body, seed: 7 } }, { json: { ...body, stream: true } },
    ];
    const keys = await Promise.all(variants.map((v) => cacheKey(input(v))));
    expect(new Set([base, ...keys]).size).toBe(variants.length + 1);
  });

  it("a body that is not JSON is keyed by its bytes; parts cannot run into each other", async () => {
    const raw = (s: string) => input({ json: null, body: new TextEncoder().encode(s) });
    expect(await cacheKey(raw("a=1"))).toBe(await cacheKey(raw("a=1")));
    expect(await cacheKey(raw("a=1"))).not.toBe(await cacheKey(raw("a=2")));
    // A body of JSON text read as raw bytes is a different request from the same JSON parsed.
    expect(await cacheKey(raw(JSON.stringify(body)))).not.toBe(await cacheKey(input()));
    expect(await cacheKey(input({ namespace: "a", tenant: "b" }))).not.toBe(await cacheKey(input({ namespace: "b", tenant: "a" })));
  });

  it("shardOf spreads keys over every shard", async () => {
    const shards = new Set<number>();
    for (let i = 0; i < 400; i++) shards.add(shardOf(await cacheKey(input({ sample: i }))));
    expect(shards.size).toBe(SHARDS);
    expect(shardOf("ffff")).toBe(0xffff % SHARDS);
  });
});

describe("semantic headers in the key", () => {
  const sent = (h: Record<string, string>) => semanticHeaders((n) => h[n] ?? null);

  it("reads the version and beta headers, each a set of features; leaves out absent, empty and unrelated ones", () => {
    expect(sent({})).toEqual([]);
    expect(sent({ "anthropic-beta": " ", "x-title": "mine", "openai-organization": "org-1" })).toEqual([]);
    expect(sent({ "openai-beta": "assistants=v2", "anthropic-version": "2023-06-01", "anthropic-beta": "b-2025, a-2024,b-2025" }))
      .toEqual([["anthropic-beta", "a-2024,b-2025"], ["anthropic-version", "2023-06-01"], ["openai-beta", "assistants=v2"]]);
  });

  it("two requests that differ in one of them are two entries; the same features in another order are one", async () => {
    const keyOf = (h: Record<string, string>) => cacheKey(input({ headers: sent(h) }));
    const keys = await Promise.all([
      keyOf({}), keyOf({ "anthropic-version": "2023-06-01" }), keyOf({ "anthropic-version": "2023-01-01" }),
      keyOf({ "anthropic-beta": "a" }), keyOf({ "anthropic-beta": "b" }), keyOf({ "openai-beta": "a" }), keyOf({ "anthropic-beta": "a,b" }),
      // Gemini's field mask picks which fields come back: another answer.
      keyOf({ "x-goog-fieldmask": "candidates" }), keyOf({ "x-goog-fieldmask": "usageMetadata" }),
    ]);
    expect(new Set(keys).size).toBe(keys.length);
    expect(await keyOf({ "anthropic-beta": "b, a" })).toBe(await keyOf({ "anthropic-beta": "a,b" }));
  });

  it("a request without them keys exactly as before they were keyed", () => {
    const head = new TextDecoder().decode(keyMaterial(input())).split("\n")[0];
    expect(head).toBe(JSON.stringify(["v1", "openai", "POST", "/v1/chat/completions", "0123456789abcdef", "default", 0]));
  });
});
