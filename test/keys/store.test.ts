// The sharded key store through the Worker (issue 26): forged keys never reach it, real keys go
// straight to their shard, keys of before keep working from the old instance, and a store that
// fails is a 503. Every call to the store is watched (support/keystore.ts).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetLegacy } from "../../src/keys/legacy";
import { KEY_TTL_MS, RECHECK_MS } from "../../src/keys/lookup";
import { STORE_TIMEOUT_MS } from "../../src/keys/store";
import { forgetViews } from "../../src/pools/route";
import { randomLegacy, randomTagged } from "../support/forged";
import { callWith as callApp } from "../support/app";
import { callWith, watchedStore } from "../support/keystore";
import { CHAT, json, mockUpstream } from "../support/upstream";
import { ADMIN, errorOf, memberOf } from "../support/vk";
import type { Env } from "../../src/env";

/** The instance names are a deployment's data: a key's row is in `virtual-keys-<its 48th character>`, an old key's in `virtual-keys`. */
const OLD = "virtual-keys";
const homeIn = (key: string) => `virtual-keys-${key[47]}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unique = () => Math.random().toString(36).slice(2, 8);

const admin = (method: string, path = "", body?: unknown) =>
  callWith(env.VIRTUAL_KEYS, `/admin/virtual-keys${path}`, { method, headers: ADMIN, body: body === undefined ? undefined : JSON.stringify(body) });
async function mint(name: string, pool = "duo", extra: Record<string, unknown> = {}): Promise<{ name: string; key: string }> {
  const res = await admin("POST", "", { name, pool, ...extra });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}
async function listed(): Promise<string[]> {
  const res = await admin("GET");
  expect(res.status).toBe(200);
  return ((await res.json()) as { virtualKeys: { name: string }[] }).virtualKeys.map((k) => k.name);
}
function chat(store: DurableObjectNamespace, key: string, claude = false, vars: Partial<Env> = {}, path?: string) {
  const [route, headers] = claude
    ? ["/anthropic/v1/messages", { "x-api-key": key, "anthropic-version": "2023-06-01" }]
    : ["/openai/v1/chat/completions", { authorization: `Bearer ${key}` }];
  const body = { model: claude ? "claude-keystore" : "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 16 };
  return callWith(store as never, path ?? route, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) }, vars);
}

/** The HMAC-SHA-256 the gateway stored for a key before shards (under VIRTUAL_KEY_SECRET here), hex. */
async function oldHash(key: string): Promise<string> {
  const k = await crypto.subtle.importKey("raw", new TextEncoder().encode("test-virtual-key-secret"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(key)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

describe("keys minted before shards", () => {
  it("a key written into the old instance works, is listed, keeps its name taken, revokes; then that shape is refused with no store call", async () => {
    // This isolate may have seen the old instance empty in another test; a deployment never writes there again.
    forgetLegacy();
    const key = randomLegacy();
    const name = `old-${unique()}`;
    await runInDurableObject(env.VIRTUAL_KEYS.get(env.VIRTUAL_KEYS.idFromName(OLD)), async (_obj, state) => {
      state.storage.sql.exec("INSERT INTO vkeys (name, hash, pool, lane, max_concurrency, created_at) VALUES (?, ?, 'duo', NULL, NULL, ?)", name, await oldHash(key), Date.now());
    });
    const { ns, calls } = watchedStore();
    const { calls: sent } = mockUpstream(() => json(CHAT));
    expect((await chat(ns, key)).status).toBe(200);
    expect(calls).toEqual([{ home: OLD, method: "lookup" }]);
    expect(await listed()).toContain(name);
    expect((await admin("POST", "", { name, pool: "duo" })).status).toBe(409);
    expect((await listed()).filter((n) => n === name)).toHaveLength(1);

    expect((await admin("DELETE", `/${name}`)).status).toBe(204);
    expect((await errorOf(await chat(ns, key))).type).toBe("unauthorized");
    calls.length = 0;
    const flood = await Promise.all(Array.from({ length: 50 }, () => chat(ns, randomLegacy())));
    expect(flood.map((r) => r.status)).toEqual(flood.map(() => 401));
    expect(calls, "the old instance is empty: its shape is refused here").toEqual([]);
    expect(sent).toHaveLength(1);
  });
});

describe("forged keys", () => {
  it("a random key of either shape, or a real one with a character changed, is refused with 401 and no store call", async () => {
    const real = await mint(`real-${unique()}`);
    const { ns, calls } = watchedStore();
    const { calls: sent } = mockUpstream(() => json(CHAT));
    // The first old-shape key lets this isolate learn that the old instance is empty.
    expect((await chat(ns, randomLegacy())).status).toBe(401);
    calls.length = 0;
    const last = real.key.at(-1) === "A" ? "B" : "A";
    const forged = [real.key.slice(0, -1) + last, ...Array.from({ length: 100 }, randomTagged), ...Array.from({ length: 100 }, randomLegacy)];
    const answers = await Promise.all(forged.map((k) => chat(ns, k)));
    for (const res of answers) {
      expect(res.status).toBe(401);
      expect(res.headers.get("x-slotgate-error")).toBe("unauthorized");
    }
    expect(calls).toEqual([]);
    expect(sent).toHaveLength(0);
    expect((await chat(ns, real.key)).status).toBe(200); // the real one still goes through
    expect(calls).toEqual([{ home: homeIn(real.key), method: "lookup" }]);
  });
});

describe("a public gateway (GATEWAY_TOKENS set)", () => {
  const PUBLIC = { GATEWAY_TOKENS: "tok-public-1" };

  it("a valid virtual key is a gateway credential on its own; forged, old-format, revoked or none: one 401, and only a real key is looked up", async () => {
    const real = await mint(`door-${unique()}`);
    const gone = await mint(`door-gone-${unique()}`);
    expect((await admin("DELETE", `/${gone.name}`)).status).toBe(204);
    const { ns, calls } = watchedStore();
    const { calls: sent } = mockUpstream(() => json(CHAT));

    // The key alone: through, to a member of its pool (with no token to strip).
    const res = await chat(ns, real.key, false, PUBLIC);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(sent.map((r) => memberOf(r.headers))).not.toContain("?");
    expect(calls).toEqual([{ home: homeIn(real.key), method: "lookup" }]);
    calls.length = 0;

    // Everything else gets the token check's own answer, word for word, and never learns more (an unknown provider, a revoked key).
    forgetLegacy();
    const last = real.key.at(-1) === "A" ? "B" : "A";
    const refused = [
      await chat(ns, "sk-someone", false, PUBLIC),
      await chat(ns, real.key.slice(0, -1) + last, false, PUBLIC),
      await chat(ns, randomTagged(), false, PUBLIC, "/nope/v1/chat/completions"),
      await chat(ns, randomLegacy(), false, PUBLIC),
      await chat(ns, gone.key, false, PUBLIC),
    ];
    const bodies = await Promise.all(refused.map((r) => r.text()));
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(bodies).size, bodies.join("\n")).toBe(1);
    expect(JSON.parse(bodies[0]!).error.message).toMatch(/x-slotgate-token is missing .* no valid virtual key/);
    // Only the revoked key (a real tag) reached the store; the rest cost no lookup.
    expect(calls).toEqual([{ home: homeIn(gone.key), method: "lookup" }]);
    expect(sent).toHaveLength(1);

    // A token still lets an old-format key (or any provider key) in, as before.
    const token = { "x-slotgate-token": "tok-public-1" };
    const withToken = await callWith(ns as never, "/openai/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer sk-own", "content-type": "application/json", ...token }, body: "{}" }, PUBLIC);
    expect(withToken.status).toBe(200);
  });

  it("a valid key is still held to its scopes and its pool's provider", async () => {
    const real = await mint(`door-scope-${unique()}`);
    const { ns } = watchedStore();
    const { calls: sent } = mockUpstream(() => json(CHAT));
    const wrongRoute = await chat(ns, real.key, true, PUBLIC);
    expect(wrongRoute.status).toBe(400);
    expect((await errorOf(wrongRoute)).message).toMatch(/is for pool duo/);
    const notScoped = await chat(ns, real.key, false, PUBLIC, "/openai/v1/fine_tuning/jobs");
    expect(notScoped.status).toBe(403);
    expect(sent).toHaveLength(0);
  });
});

describe("sharded keys", () => {
  it("keys are looked up in their own shard only, listed together by name, and refused once revoked", async () => {
    const tag = unique();
    const keys = [];
    for (let i = 0; i < 12; i++) keys.push(await mint(`shard-${tag}-${i}`));
    expect(new Set(keys.map((k) => homeIn(k.key))).size, "the names are spread over shards").toBeGreaterThan(2);
    mockUpstream(() => json(CHAT));
    for (const k of keys) {
      const { ns, calls } = watchedStore();
      expect((await chat(ns, k.key)).status).toBe(200);
      expect(calls).toEqual([{ home: homeIn(k.key), method: "lookup" }]);
    }
    const names = await listed();
    expect(names).toEqual(expect.arrayContaining(keys.map((k) => k.name)));
    expect(names).toEqual([...names].sort());

    // Through this isolate's DELETE: refused at once.
    for (const k of keys.slice(0, 6)) {
      expect((await admin("DELETE", `/${k.name}`)).status).toBe(204);
      expect((await chat(env.VIRTUAL_KEYS, k.key)).status).toBe(401);
    }
    // Removed by another isolate (straight from its shard): refused here once the isolate's answer expires.
    const removed = Date.now();
    for (const k of keys.slice(6)) expect(await env.VIRTUAL_KEYS.get(env.VIRTUAL_KEYS.idFromName(homeIn(k.key))).remove(k.name)).toBe(true);
    for (const k of keys.slice(6)) await vi.waitFor(async () => expect((await chat(env.VIRTUAL_KEYS, k.key)).status).toBe(401), { timeout: KEY_TTL_MS + 1_000, interval: 50 });
    expect(Date.now() - removed).toBeLessThan(KEY_TTL_MS + 1_000);
    expect((await listed()).filter((n) => n.startsWith(`shard-${tag}-`))).toEqual([]);
  });
});

describe("a store that fails", () => {
  it("overloaded or silent: 503 key_store_unavailable with retry-after, nothing sent; the admin API too", async () => {
    const [a, b] = [await mint(`down-a-${unique()}`), await mint(`down-b-${unique()}`)];
    const { ns, state } = watchedStore();
    const { calls: sent } = mockUpstream(() => json(CHAT));
    state.fault = "overloaded";
    forgetLegacy();
    for (const key of [a.key, randomLegacy()]) {
      const res = await chat(ns, key);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect((await errorOf(res)).type).toBe("key_store_unavailable");
    }
    for (const [method, path, body] of [["GET", ""], ["POST", "", { name: `down-c-${unique()}`, pool: "duo" }], ["DELETE", `/${a.name}`]] as const) {
      const res = await callWith(ns, `/admin/virtual-keys${path}`, { method, headers: ADMIN, body: body && JSON.stringify(body) });
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers.get("x-slotgate-error")).toBe("key_store_unavailable");
    }
    state.fault = "hang";
    const started = Date.now();
    const late = await chat(ns, b.key);
    expect(late.status).toBe(503);
    expect(Date.now() - started).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 50);
    expect(late.headers.get("retry-after")).toBe("1");
    expect(sent).toHaveLength(0);
    state.fault = null;
    expect((await chat(ns, a.key)).status).toBe(200);
  });

  it("a request waiting in line whose key's re-check fails takes it as no news, and is served", async () => {
    const vk = await mint(`waits-${unique()}`, "claude", { maxConcurrency: 1 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const answer = { id: "msg_1", type: "message", role: "assistant", content: [], model: "m", stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } };
    const { calls: sent } = mockUpstream(async () => {
      await held;
      return json(answer);
    });
    const { ns, calls, state } = watchedStore();
    const first = chat(ns, vk.key, true);
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    const second = chat(ns, vk.key, true);
    await sleep(100);
    state.fault = "overloaded";
    const before = calls.length;
    await sleep(KEY_TTL_MS + 4 * RECHECK_MS);
    expect(calls.length, "the waiting request re-checked its key").toBeGreaterThan(before);
    release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect(sent).toHaveLength(2);
  });
});

describe("the secret under a key's check characters (issue 33)", () => {
  const mintWith = (vars: Record<string, string | undefined>) =>
    callApp("/admin/virtual-keys", { method: "POST", headers: ADMIN, body: JSON.stringify({ name: `secret-${unique()}`, pool: "duo" }) }, vars);
  /** What a holder can do offline: HMAC the key's signed part under a guess and compare with its tag. */
  async function tagChecksUnder(key: string, guess: string): Promise<boolean> {
    const k = await crypto.subtle.importKey("raw", new TextEncoder().encode(guess), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", k, new TextEncoder().encode(key.slice(0, 48))));
    return btoa(String.fromCharCode(...mac.slice(0, 6))).replaceAll("+", "-").replaceAll("/", "_") === key.slice(48);
  }

  it("is never the admin token: no key can be minted without VIRTUAL_KEY_SECRET, nor with it equal to ADMIN_TOKEN", async () => {
    for (const vars of [{ VIRTUAL_KEY_SECRET: undefined }, { VIRTUAL_KEY_SECRET: "" }, { VIRTUAL_KEY_SECRET: env.ADMIN_TOKEN }]) {
      const res = await mintWith(vars);
      expect(res.status, JSON.stringify(vars)).toBe(500);
      const err = await errorOf(res);
      expect(err.type).toBe("config_error");
      expect(err.message).toMatch(/VIRTUAL_KEY_SECRET/);
      expect(err.message).not.toContain("test-admin-token");
    }
  });

  it("a minted key's tag checks out under VIRTUAL_KEY_SECRET and never under a guess of ADMIN_TOKEN", async () => {
    const res = await mintWith({});
    expect(res.status).toBe(201);
    const { key } = (await res.json()) as { key: string };
    expect(await tagChecksUnder(key, env.VIRTUAL_KEY_SECRET!)).toBe(true);
    expect(await tagChecksUnder(key, env.ADMIN_TOKEN!)).toBe(false);
  });
});
