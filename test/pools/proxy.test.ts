import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetViews } from "../../src/pools/route";
import { CHAT, json, mockUpstream } from "../support/upstream";

const ADMIN = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
const KEY_A = env.POOL_KEY_A as string;
const KEY_B = env.POOL_KEY_B as string;
const QUOTA = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let n = 0;
/** A virtual key with a name no other test uses (storage is shared within a file). */
async function mint(pool: string, extra: Record<string, unknown> = {}) {
  const name = `vk-${++n}-${Math.random().toString(36).slice(2, 8)}`;
  const res = await exports.default.fetch("http://gateway/admin/virtual-keys", { method: "POST", headers: ADMIN, body: JSON.stringify({ name, pool, ...extra }) });
  expect(res.status).toBe(201);
  return (await res.json()) as { name: string; key: string; pool: string; createdAt: string };
}

function call(key: string, opts: { path?: string; header?: string; model?: string; headers?: Record<string, string>; signal?: AbortSignal } = {}) {
  const header = opts.header ?? "authorization";
  return exports.default.fetch(`http://gateway${opts.path ?? "/openai/v1/chat/completions"}`, {
    method: "POST",
    headers: { [header]: header === "authorization" ? `Bearer ${key}` : key, "content-type": "application/json", ...opts.headers },
    body: JSON.stringify({ model: opts.model ?? "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 16 }),
    signal: opts.signal,
  });
}

/** A key's limiter state, once the Directory lists it (its report is asynchronous). */
async function stateOf(key: string): Promise<{ callers: { caller: string; lane: string }[] }> {
  let res!: Response;
  await vi.waitFor(async () => {
    res = await exports.default.fetch(`http://gateway/admin/keys/${encodeURIComponent(key)}`, { headers: ADMIN });
    expect(res.status).toBe(200);
  });
  return res.json();
}

/** The limiter key a pool member serves `model` under, as /admin/pools lists it (answers name the virtual key's own key, never a member's). */
async function memberKey(pool: string, member: string, model: string): Promise<string> {
  let key: string | undefined;
  await vi.waitFor(async () => {
    const view = (await (await exports.default.fetch("http://gateway/admin/pools", { headers: ADMIN })).json()) as { pools: { name: string; members: { name: string; keys: string[] }[] }[] };
    key = view.pools.find((p) => p.name === pool)?.members.find((m) => m.name === member)?.keys.find((k) => k.split(":")[1] === model);
    expect(key).toBeDefined();
  });
  return key!;
}

const memberOf = (h: Headers) => (h.get("authorization") === `Bearer ${KEY_A}` ? "a" : h.get("authorization") === `Bearer ${KEY_B}` ? "b" : "?");

beforeEach(() => forgetViews());
afterEach(() => vi.restoreAllMocks());

describe("virtual keys", () => {
  it("mints an sgk- key shown once, lists without key material, refuses a reused name, revokes", async () => {
    const vk = await mint("duo", { lane: "normal", maxConcurrency: 4 });
    expect(vk.key).toMatch(/^sgk-[A-Za-z0-9_-]{43}[0-9a-f][A-Za-z0-9_-]{8}$/);
    expect(vk.pool).toBe("duo");
    const again = await exports.default.fetch("http://gateway/admin/virtual-keys", { method: "POST", headers: ADMIN, body: JSON.stringify({ name: vk.name, pool: "duo" }) });
    expect(again.status).toBe(409);
    const list = await exports.default.fetch("http://gateway/admin/virtual-keys", { headers: ADMIN });
    const text = await list.text();
    expect(text).not.toContain(vk.key);
    expect(text).not.toContain(vk.key.slice(4, 20));
    expect(text).not.toContain(KEY_A);
    const row = (JSON.parse(text) as { virtualKeys: Record<string, unknown>[] }).virtualKeys.find((k) => k.name === vk.name);
    expect(row).toMatchObject({ name: vk.name, pool: "duo", lane: "normal", maxConcurrency: 4, createdAt: vk.createdAt, lastUsed: null });
    expect(Object.keys(row!).sort()).toEqual(["budget", "budgetPeriod", "cache", "createdAt", "lane", "lastUsed", "maxConcurrency", "name", "pool", "scopes", "spend", "tier"]);
    expect(row).toMatchObject({ scopes: ["inference", "models"], cache: null });

    mockUpstream(() => json(CHAT));
    expect((await call(vk.key)).status).toBe(200);
    const del = await exports.default.fetch(`http://gateway/admin/virtual-keys/${vk.name}`, { method: "DELETE", headers: ADMIN });
    expect(del.status).toBe(204);
    const after = await call(vk.key);
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { type: string } }).error.type).toBe("unauthorized");
  });

  it("refuses bad input to the admin API with the reason, and needs the admin token", async () => {
    const post = (body: unknown, headers: Record<string, string> = ADMIN) => exports.default.fetch("http://gateway/admin/virtual-keys", { method: "POST", headers, body: JSON.stringify(body) });
    expect((await post({ name: "x", pool: "nope" })).status).toBe(400);
    expect((await post({ name: "bad name!", pool: "duo" })).status).toBe(400);
    expect((await post({ name: "x", pool: "duo", lane: "urgent" })).status).toBe(400);
    expect((await post({ name: "x", pool: "duo", maxConcurrency: 0 })).status).toBe(400);
    expect((await post({ name: "x", pool: "duo" }, { "content-type": "application/json" })).status).toBe(401);
    const gone = await exports.default.fetch("http://gateway/admin/virtual-keys/never-made", { method: "DELETE", headers: ADMIN });
    expect(gone.status).toBe(404);
  });

  it("an unknown sgk- key is refused and never forwarded, in every SDK's header", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    for (const header of ["authorization", "x-api-key", "api-key", "x-goog-api-key"]) {
      const res = await call("sgk-not-a-real-key-0000000000000000000000000000", { header });
      expect(res.status).toBe(401);
    }
    expect(calls).toHaveLength(0);
  });

  it("a virtual key on a route its pool cannot serve is a 400", async () => {
    const vk = await mint("duo");
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call(vk.key, { path: "/anthropic/v1/messages", header: "x-api-key", headers: { "anthropic-version": "2023-06-01" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("invalid_request");
    expect(calls).toHaveLength(0);
  });
});

describe("pools", () => {
  it("sends with a member's key, never the virtual key, under the virtual key's name", async () => {
    const vk = await mint("duo");
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call(vk.key, { headers: { "openai-organization": "org-caller", "x-slotgate-caller": "someone-else" } });
    expect(res.status).toBe(200);
    const h = calls[0]!.headers;
    expect(["a", "b"]).toContain(memberOf(h));
    expect(h.get("openai-organization")).toBeNull();
    expect(calls[0]!.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(JSON.stringify([...h])).not.toContain("sgk-");
    expect(res.headers.get("x-slotgate-key")).toMatch(/^openai:gpt-4o-mini:[0-9a-f]{16}$/);
    const key = await memberKey("duo", `org-${memberOf(h)}`, "gpt-4o-mini");
    expect((await stateOf(key)).callers.map((c) => c.caller)).toContain(vk.name);
  });

  it("the metrics label a member's series with its pool and member, and carry no key", async () => {
    const vk = await mint("duo");
    const { calls } = mockUpstream(() => json(CHAT));
    // Until org-b has served one: org-a's credential is also the `shared` pool's member (POOLS in
    // vitest.config.ts), whose name its key's series carry (one key, one label: the last pool's).
    // Six requests all went to org-a once in CI.
    for (let i = 0; i < 40 && !calls.some((c) => memberOf(c.headers) === "b"); i++) expect((await call(vk.key, { model: "gpt-metrics" })).status).toBe(200);
    expect(calls.some((c) => memberOf(c.headers) === "b")).toBe(true);
    let text = "";
    await vi.waitFor(async () => {
      text = await (await exports.default.fetch("http://gateway/admin/metrics", { headers: ADMIN })).text();
      expect(text).toMatch(/slotgate_requests_total\{[^}]*model="gpt-metrics"[^}]*pool="duo",member="org-b"/);
    }, { timeout: 5_000 });
    for (const secret of [KEY_A, KEY_B, vk.key]) expect(text).not.toContain(secret);
  });

  it("a virtual key's lane is the highest its requests get: a header may lower it, never raise it", async () => {
    const vk = await mint("duo", { lane: "low" });
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call(vk.key, { headers: { "x-slotgate-priority": "high" } });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(1);
    const key = await memberKey("duo", `org-${memberOf(calls[0]!.headers)}`, "gpt-4o-mini");
    expect((await stateOf(key)).callers.find((c) => c.caller === vk.name)?.lane).toBe("low");
  });

  it("spreads requests over both members", async () => {
    const vk = await mint("duo");
    const { calls } = mockUpstream(() => json(CHAT));
    for (let i = 0; i < 40; i++) expect((await call(vk.key)).status).toBe(200);
    const a = calls.filter((c) => memberOf(c.headers) === "a").length;
    expect(a).toBeGreaterThan(5);
    expect(a).toBeLessThan(35);
  });

  it("a member out of quota is taken out, its requests answered by the other, and it is tried again with one request", async () => {
    const vk = await mint("duo", {});
    let aQuota = true;
    const { calls } = mockUpstream((req) => (memberOf(req.headers) === "a" && aQuota ? json(QUOTA, 429) : json(CHAT)));
    for (let i = 0; i < 12; i++) {
      const res = await call(vk.key, { model: "gpt-out-test" });
      expect(res.status).toBe(200);
    }
    const triedA = calls.filter((c) => memberOf(c.headers) === "a").length;
    expect(triedA).toBe(1);
    const pools = (await (await exports.default.fetch("http://gateway/admin/pools", { headers: ADMIN })).json()) as { pools: { name: string; members: Record<string, unknown>[] }[] };
    const duo = pools.pools.find((p) => p.name === "duo")!;
    const a = duo.members.find((m) => m.name === "org-a")!;
    expect(a).toMatchObject({ state: "out", reason: "insufficient_quota", secret: "POOL_KEY_A" });
    expect(Date.parse(a.until as string)).toBeGreaterThan(Date.now() - 1_000);
    expect(JSON.stringify(pools)).not.toContain(KEY_A);
    // Past POOL_OUT_MS (400 in tests), one real request tries it; it works again, so it is back in.
    aQuota = false;
    await sleep(450);
    for (let i = 0; i < 20; i++) expect((await call(vk.key, { model: "gpt-out-test" })).status).toBe(200);
    expect(calls.filter((c) => memberOf(c.headers) === "a").length).toBeGreaterThan(triedA + 1);
    const back = (await (await exports.default.fetch("http://gateway/admin/pools", { headers: ADMIN })).json()) as typeof pools;
    expect(back.pools.find((p) => p.name === "duo")!.members.find((m) => m.name === "org-a")).toMatchObject({ state: "in", reason: null });
  });

  it("with every member out the caller gets the last member's error with a retry-after, the member's key cut out", async () => {
    const vk = await mint("duo");
    const masked = (k: string) => ({ error: { message: `Incorrect API key provided: ${k.slice(0, 6)}************${k.slice(-4)}. You can find your API key at https://platform.openai.com.`, type: "invalid_request_error", code: "invalid_api_key" } });
    const { calls } = mockUpstream((req) => json(masked(memberOf(req.headers) === "a" ? KEY_A : KEY_B), 401));
    // One request takes at most one member out: the first goes out, the second's refusal is this caller's answer.
    const first = await call(vk.key, { model: "gpt-all-out", headers: { "x-slotgate-deadline-ms": "300" } });
    expect(first.status).toBe(401);
    expect(first.headers.get("retry-after")).toBeNull();
    expect(calls).toHaveLength(2);
    // The next request takes the second out too: now every member is out.
    const res = await call(vk.key, { model: "gpt-all-out", headers: { "x-slotgate-deadline-ms": "300" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    for (const text of [await first.text(), await res.text()]) {
      expect(text).toContain("Incorrect API key provided");
      expect(text).not.toContain(KEY_A.slice(-4));
      expect(text).not.toContain(KEY_B.slice(-4));
    }
    expect(calls).toHaveLength(3);
  });

  it("rewrites a request for an Azure member: its deployment, api-version and api-key", async () => {
    const vk = await mint("mixed");
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call(vk.key);
    expect(res.status).toBe(200);
    expect(calls[0]!.url).toBe("https://myres.openai.azure.com/openai/deployments/mini-dep/chat/completions?api-version=2024-10-21");
    expect(calls[0]!.headers.get("api-key")).toBe(env.POOL_KEY_AZ);
    expect(calls[0]!.headers.get("authorization")).toBeNull();
    expect(await memberKey("mixed", "az", "myres/mini-dep")).toMatch(/^azure:myres\/mini-dep:[0-9a-f]{16}$/);
    // A model with no deployment there has no member to serve it.
    const none = await call(vk.key, { model: "gpt-4o" });
    expect(none.status).toBe(400);
  });

  it("an Anthropic pool: x-api-key carries the member's key", async () => {
    const vk = await mint("claude");
    const { calls } = mockUpstream(() => json({ id: "msg_1", type: "message", role: "assistant", content: [{ type: "text", text: "hi" }], model: "claude-3-5-haiku-latest", stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 1 } }));
    const res = await call(vk.key, { path: "/anthropic/v1/messages", header: "x-api-key", model: "claude-3-5-haiku-latest", headers: { "anthropic-version": "2023-06-01" } });
    expect(res.status).toBe(200);
    expect(calls[0]!.headers.get("x-api-key")).toBe(env.POOL_KEY_ANT);
  });

  it("revoking a key refuses its request already queued, which never reaches the provider", async () => {
    const vk = await mint("claude", { maxConcurrency: 1 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { calls } = mockUpstream(async () => {
      await held;
      return json({ id: "msg_1", type: "message", role: "assistant", content: [], model: "m", stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } });
    });
    const opts = { path: "/anthropic/v1/messages", header: "x-api-key", model: "claude-revoke", headers: { "anthropic-version": "2023-06-01" } };
    const first = call(vk.key, opts);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    const second = call(vk.key, opts);
    await sleep(100);
    const del = await exports.default.fetch(`http://gateway/admin/virtual-keys/${vk.name}`, { method: "DELETE", headers: ADMIN });
    expect(del.status).toBe(204);
    const refused = await second;
    expect(refused.status).toBe(401);
    release();
    await first;
    expect(calls).toHaveLength(1);
  });

  it("revoking a key does not cut its request already at the provider: that answer is the caller's", async () => {
    const vk = await mint("claude");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { calls } = mockUpstream(async () => {
      await held;
      return json({ id: "msg_2", type: "message", role: "assistant", content: [], model: "m", stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } });
    });
    const sent = call(vk.key, { path: "/anthropic/v1/messages", header: "x-api-key", model: "claude-inflight", headers: { "anthropic-version": "2023-06-01" } });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect((await exports.default.fetch(`http://gateway/admin/virtual-keys/${vk.name}`, { method: "DELETE", headers: ADMIN })).status).toBe(204);
    await sleep(600); // past the re-check interval: the watch has seen the revocation
    release();
    expect((await sent).status).toBe(200);
  });
});
