import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import app from "../../src/index";
import type { Env } from "../../src/env";
import { LABELS_PER_CREDENTIAL } from "../../src/directory/object";
import { HOMES } from "../../src/keys/store";
import { callWith as call } from "../support/app";
import { CHAT, RATE_LIMITED, chat, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

const post = (headers: Record<string, string> = {}) => ({
  method: "POST",
  headers: { authorization: "Bearer sk-x", "content-type": "application/json", ...headers },
  body: JSON.stringify({ model: "gpt-4o-mini", messages: [] }),
});

describe("tenants", () => {
  it("two credentials never share a limiter, whatever x-slotgate-limit-key says", async () => {
    mockUpstream(() => json(CHAT));
    const a = await chat({ key: "sk-tenant-a", headers: { "x-slotgate-limit-key": "shared" } });
    const b = await chat({ key: "sk-tenant-b", headers: { "x-slotgate-limit-key": "shared" } });
    expect(a.headers.get("x-slotgate-key")).not.toBe(b.headers.get("x-slotgate-key"));
    expect(a.headers.get("x-slotgate-key")).toMatch(/^openai:shared:/);
  });

  it("one tenant's 429 storm does not slow another", async () => {
    mockUpstream((req) =>
      req.headers.get("authorization") === "Bearer sk-stormy" ? json(RATE_LIMITED, 429, { "retry-after": "30" }) : json(CHAT),
    );
    const stormy = await chat({ key: "sk-stormy", headers: { "x-slotgate-deadline-ms": "1000" } });
    expect(stormy.status).toBe(429);
    const calm = await Promise.all(Array.from({ length: 10 }, () => chat({ key: "sk-calm" })));
    expect(calm.every((r) => r.status === 200 && r.headers.get("x-slotgate-attempts") === "1")).toBe(true);
    // All answered while the stormy key is still held for its 30 s hint: nobody waited on it.
    const stormyGate = (await env.LIMITER.get(env.LIMITER.idFromName(stormy.headers.get("x-slotgate-key")!)).state()).cooldownUntil;
    expect(Date.parse(stormyGate!)).toBeGreaterThan(Date.now());
  });
});

describe("labels (issue 33)", () => {
  it("a credential may use LABELS_PER_CREDENTIAL labels: a new one past them is 400 and never sent; its own and another credential's go", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const first = await chat({ key: "sk-labels-many", headers: { "x-slotgate-limit-key": "run-0" } });
    expect(first.status).toBe(200);
    const hash = first.headers.get("x-slotgate-key")!.split(":")[2]!;
    // Its other labels, as if used already (each one a request like the one above).
    await runInDurableObject(env.DIRECTORY.get(env.DIRECTORY.idFromName("directory")), (_o, state) => {
      for (let i = 1; i < LABELS_PER_CREDENTIAL; i++) state.storage.sql.exec("INSERT OR IGNORE INTO labels (cred, label, last_seen) VALUES (?, ?, ?)", `openai:${hash}`, `run-${i}`, Date.now());
    });
    const refused = await chat({ key: "sk-labels-many", headers: { "x-slotgate-limit-key": "run-new" } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/already uses 100 x-slotgate-limit-key labels/);
    expect(calls).toHaveLength(1);
    expect((await chat({ key: "sk-labels-many", headers: { "x-slotgate-limit-key": `run-${LABELS_PER_CREDENTIAL - 1}` } })).status).toBe(200);
    expect((await chat({ key: "sk-labels-other", headers: { "x-slotgate-limit-key": "run-new" } })).status).toBe(200);
  });
});

describe("labels cost strangers nothing (issue 39)", () => {
  const rowsOf = (cred: string) =>
    runInDurableObject(env.DIRECTORY.get(env.DIRECTORY.idFromName("directory")), (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM labels WHERE cred LIKE ?", cred).one().n);

  it("a loop over random credentials, each with labels, stores no label: only a credential the provider answered keeps its own", async () => {
    const { calls } = mockUpstream((req) => (req.headers.get("authorization") === "Bearer sk-labels-real" ? json(CHAT) : json({ error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }, 401)));
    const before = await rowsOf("openai:%");
    for (let i = 0; i < 20; i++) {
      const stranger = `sk-stranger-${i}-${Math.random().toString(36).slice(2)}`;
      for (let j = 0; j < 5; j++) expect((await chat({ key: stranger, headers: { "x-slotgate-limit-key": `l-${j}` } })).status).toBe(401);
    }
    expect(calls).toHaveLength(100);
    expect(await rowsOf("openai:%")).toBe(before);
    // A real key's label is kept once its answer came.
    const real = await chat({ key: "sk-labels-real", headers: { "x-slotgate-limit-key": "mine" } });
    expect(real.status).toBe(200);
    const hash = real.headers.get("x-slotgate-key")!.split(":")[2]!;
    await vi.waitFor(async () => expect(await rowsOf(`openai:${hash}`)).toBe(1));
    expect(await rowsOf("openai:%")).toBe(before + 1);
  });
});

describe("gateway tokens", () => {
  it("without a listed x-slotgate-token: 401 and nothing goes upstream", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    for (const headers of [{}, { "x-slotgate-token": "wrong" }] as Record<string, string>[]) {
      const res = await call("/openai/v1/chat/completions", post(headers), { GATEWAY_TOKENS: "tok-1, tok-2" });
      expect(res.status).toBe(401);
      expect(res.headers.get("x-slotgate-error")).toBe("unauthorized");
    }
    expect(calls).toHaveLength(0);
  });

  it("with one: forwarded, and the token is stripped", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call("/openai/v1/chat/completions", post({ "x-slotgate-token": "tok-2" }), { GATEWAY_TOKENS: "tok-1,tok-2" });
    expect(res.status).toBe(200);
    expect(calls[0]!.headers.get("x-slotgate-token")).toBeNull();
  });
});

describe("configuration", () => {
  it("PROVIDERS points a provider at another base URL, as a string or an object", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    await call("/openai/v1/chat/completions", post(), { PROVIDERS: '{"openai":{"baseUrl":"http://127.0.0.1:9100"}}' });
    await call("/local/v1/chat/completions", post(), { PROVIDERS: { local: { baseUrl: "http://10.0.0.5:8000/api/", headers: "openai" } } });
    expect(calls.map((c) => c.url)).toEqual(["http://127.0.0.1:9100/v1/chat/completions", "http://10.0.0.5:8000/api/v1/chat/completions"]);
  });

  it.each([
    ["{not json", /not valid JSON/],
    ["[1,2]", /must be a JSON object/],
    ['{"openai":{"baseUrl":"file:///etc/passwd"}}', /must be http\(s\)/],
    ['{"openai":{"baseUrl":"not a url"}}', /not a URL/],
    ['{"x":{"baseUrl":"http://a","headers":"soap"}}', /headers must be one of/],
    ['{"admin":{"baseUrl":"http://a"}}', /reserved/],
  ])("a malformed PROVIDERS %s gets 500 config_error naming the problem, and nothing is sent", async (providers, message) => {
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call("/openai/v1/chat/completions", post(), { PROVIDERS: providers });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(message);
    expect(calls).toHaveLength(0);
  });

  it("a bad numeric var is named too", async () => {
    const res = await call("/openai/v1/chat/completions", post(), { MAX_ATTEMPTS: "lots" });
    expect(res.status).toBe(500);
    expect(await res.text()).toContain("MAX_ATTEMPTS");
  });

  it("a malformed limiter var (MIN_CONCURRENCY=abc) is a config_error naming it, not a 503, and its value is never echoed", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    for (const vars of [{ MIN_CONCURRENCY: "abc-secretish" }, { DECREASE_FACTOR: "0.999" }, { MAX_ATTEMPTS: "lots-secretish" }, { LIMITER_LOCATION: "mars-secretish" }] as Partial<Env>[]) {
      const res = await call("/openai/v1/chat/completions", post(), vars);
      const [name, value] = Object.entries(vars)[0]!;
      expect(res.status).toBe(500);
      expect(res.headers.get("x-slotgate-error")).toBe("config_error");
      const text = await res.text();
      expect(text).toContain(name);
      expect(text).not.toContain(value as string);
    }
    expect(calls).toHaveLength(0);
  });

  it("checks the gateway token before anything else: no provider names or variable problems shown to a stranger", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    for (const [path, vars] of [
      ["/nope/v1/chat/completions", {}],
      ["/openai/v1/chat/completions", { PROVIDERS: "{not json" }],
      ["/openai/v1/chat/completions", { MIN_CONCURRENCY: "abc" }],
    ] as [string, Partial<Env>][]) {
      const res = await call(path, post(), { GATEWAY_TOKENS: "tok-1", ...vars });
      expect(res.status).toBe(401);
      expect(res.headers.get("x-slotgate-error")).toBe("unauthorized");
    }
    expect(calls).toHaveLength(0);
  });

  it("a percent-encoded provider name keeps the upstream path whole", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call("/%6fpenai/v1/chat/completions?x=1", post(), {});
    expect(res.status).toBe(200);
    expect(calls.map((c) => new URL(c.url).pathname + new URL(c.url).search)).toEqual(["/v1/chat/completions?x=1"]);
  });

  it("a provider that never answers: its slot is free again after UPSTREAM_TIMEOUT_MS, retried, and the caller gets a clear 502", async () => {
    const { calls } = mockUpstream((req) => new Promise<Response>((_, reject) => req.signal.addEventListener("abort", () => reject(req.signal.reason))));
    const res = await call("/openai/v1/chat/completions", post({ authorization: "Bearer sk-hung" }), { UPSTREAM_TIMEOUT_MS: "50", MAX_ATTEMPTS: "2", BASE_BACKOFF_MS: "1" });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { type: string; message: string } }).error).toEqual({
      type: "upstream_unreachable", message: expect.stringMatching(/^the provider at api\.openai\.com did not answer in time \(2 attempts\): .*UPSTREAM_TIMEOUT_MS/),
    });
    expect(calls).toHaveLength(2);
    const stub = env.LIMITER.get(env.LIMITER.idFromName(res.headers.get("x-slotgate-key")!));
    const state = await stub.state();
    expect(state.concurrency.inFlight).toBe(0);
    expect(state.history.filter((h) => h.reason === "rate_limit")).toEqual([]);
  });

  it("past BODY_BUDGET_BYTES of bodies held in the isolate, a new body gets 503 overloaded with retry-after, and is never sent", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { calls } = mockUpstream(async () => {
      await gate;
      return json(CHAT);
    });
    const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x".repeat(4_000) }] });
    const vars = { BODY_BUDGET_BYTES: "6000" };
    const first = call("/openai/v1/chat/completions", { ...post({ authorization: "Bearer sk-budget" }), body }, vars);
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    const second = await call("/openai/v1/chat/completions", { ...post({ authorization: "Bearer sk-budget" }), body }, vars);
    expect(second.status).toBe(503);
    expect(second.headers.get("x-slotgate-error")).toBe("overloaded");
    expect(second.headers.get("retry-after")).toBe("1");
    open();
    expect((await first).status).toBe(200);
    expect(calls).toHaveLength(1);
    // Let go when the first ended: the same body is taken again.
    expect((await call("/openai/v1/chat/completions", { ...post({ authorization: "Bearer sk-budget" }), body }, vars)).status).toBe(200);
  });

  it("a body that trickles is 408 past BODY_TIMEOUT_MS, and bodies not yet sent take none of BODY_BUDGET_BYTES (issue 33)", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const vars = { BODY_BUDGET_BYTES: "6000", BODY_TIMEOUT_MS: "300" };
    // Strangers that declare the most a body may be (10 MiB) and send a few bytes of it.
    const enc = new TextEncoder();
    const trickles = Array.from({ length: 5 }, () => {
      let ctrl!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({ start: (c) => ((ctrl = c), c.enqueue(enc.encode('{"model":"gpt-4o-mini",'))) });
      return { body, ctrl };
    });
    const slow = trickles.map((t) =>
      call("/openai/v1/chat/completions", { method: "POST", headers: { authorization: "Bearer sk-trickle", "content-type": "application/json", "content-length": String(10 * 1024 * 1024) }, body: t.body, duplex: "half" } as RequestInit, vars),
    );
    await new Promise((r) => setTimeout(r, 50));
    // Meanwhile everyone else is served: the unsent bodies hold nothing.
    const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "x".repeat(4_000) }] });
    expect((await call("/openai/v1/chat/completions", { ...post({ authorization: "Bearer sk-honest" }), body }, vars)).status).toBe(200);
    for (const res of await Promise.all(slow)) {
      expect(res.status).toBe(408);
      expect(res.headers.get("x-slotgate-error")).toBe("request_timeout");
    }
    expect(calls).toHaveLength(1);
  });

  it("LIMITER_LOCATION: a Durable Object location hint is used, anything else is named", async () => {
    mockUpstream(() => json(CHAT));
    expect((await call("/openai/v1/chat/completions", post(), { LIMITER_LOCATION: "enam" })).status).toBe(200);
    const bad = await call("/openai/v1/chat/completions", post(), { LIMITER_LOCATION: "mars" });
    expect(bad.status).toBe(500);
    expect(await bad.text()).toMatch(/LIMITER_LOCATION must be one of wnam, enam/);
  });

  it("x-slotgate-max-attempts may lower the attempts but never raise them", async () => {
    const { calls } = mockUpstream(() => json({ error: { message: "busy" } }, 503, { "retry-after-ms": "1" }));
    const res = await call("/openai/v1/chat/completions", post({ "x-slotgate-max-attempts": "50" }), { MAX_ATTEMPTS: "3" });
    expect(res.headers.get("x-slotgate-attempts")).toBe("3");
    expect(calls).toHaveLength(3);
  });

  it("oversized headers get a clean answer: a long label is refused, a long credential is hashed like any other", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const label = await call("/openai/v1/chat/completions", post({ "x-slotgate-limit-key": "x".repeat(129) }), {});
    expect(label.status).toBe(400);
    expect(label.headers.get("x-slotgate-error")).toBe("invalid_request");
    const huge = `Bearer sk-${"k".repeat(32 * 1024)}`;
    const res = await call("/openai/v1/chat/completions", post({ authorization: huge, "x-note": "n".repeat(32 * 1024) }), {});
    expect(res.status).toBe(200);
    expect(res.headers.get("x-slotgate-key")).toMatch(/^openai:gpt-4o-mini:[0-9a-f]{16}$/);
    expect(calls[0]!.headers.get("authorization")).toBe(huge);
  });

  it("a body that is not JSON is forwarded untouched", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const res = await call("/openai/v1/audio/transcriptions", { method: "POST", headers: { authorization: "Bearer sk-x" }, body: "\x00\x01binary" }, {});
    expect(res.status).toBe(200);
    expect(calls[0]!.body).toBe("\x00\x01binary");
    expect(res.headers.get("x-slotgate-key")).toMatch(/^openai:\*:/);
  });
});

/**
 * Every row of every table of one Durable Object's SQLite storage (the KV API's _cf_KV too), as
 * text. Not _cf_METADATA: the runtime's own (the alarm's time), which it allows nobody to read.
 */
function dumpStorage(stub: DurableObjectStub): Promise<string> {
  return runInDurableObject(stub, (_obj, state) => {
    const sql = state.storage.sql;
    const tables = sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name != '_cf_METADATA'").toArray();
    return tables.map((t) => JSON.stringify(sql.exec(`SELECT * FROM "${t.name}"`).toArray())).join("\n");
  });
}

function captureLogs(): string[] {
  const logs: string[] = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const)
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(" ")));
  return logs;
}

describe("secrets", () => {
  it("a planted credential appears nowhere: not in the Limiter's storage, the answer's headers, or the logs", async () => {
    const secret = "sk-planted-secret-123";
    const logs = captureLogs();
    mockUpstream((_, n) => (n === 1 ? json(RATE_LIMITED, 429, { "retry-after-ms": "5" }) : json(CHAT)));
    const res = await chat({ key: secret });
    const key = res.headers.get("x-slotgate-key")!;
    expect([...res.headers].flat().join("\n")).not.toContain(secret);
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    const dump = await dumpStorage(stub);
    expect(dump).toContain(key.split(":")[2]); // the hash is there: the dump is real
    expect(dump).not.toContain(secret);
    expect(JSON.stringify(await stub.state())).not.toContain(secret);
    expect(logs.join("\n")).not.toContain(secret);
  });

  it("pooled: the members' keys and the virtual key appear nowhere: the member's limiter, the key store, answers, admin answers, logs", async () => {
    const members = [env.POOL_KEY_A, env.POOL_KEY_B];
    const logs = captureLogs();
    const admin = { authorization: "Bearer test-admin-token", "content-type": "application/json" };
    const name = `secret-scan-${Math.random().toString(36).slice(2, 8)}`;
    const minted = await app.fetch(new Request("http://gateway/admin/virtual-keys", { method: "POST", headers: admin, body: JSON.stringify({ name, pool: "duo" }) }), env, createExecutionContext());
    expect(minted.status).toBe(201);
    const vk = (await minted.json()) as { key: string };
    const secrets = [...members, vk.key, vk.key.slice(4), vk.key.slice(4, 47)];
    const { calls } = mockUpstream((_, n) => (n === 1 ? json(RATE_LIMITED, 429, { "retry-after-ms": "5" }) : json(CHAT)));
    const res = await chat({ key: vk.key });
    expect(res.status).toBe(200);
    expect(members).toContain(calls.at(-1)!.headers.get("authorization")!.slice("Bearer ".length)); // a member's key did go upstream
    // The member's limiter key, as /admin/pools lists it (the answer names the virtual key's own key).
    let key = "";
    await vi.waitFor(async () => {
      const view = (await (await app.fetch(new Request("http://gateway/admin/pools", { headers: admin }), env, createExecutionContext())).json()) as { pools: { name: string; members: { keys: string[] }[] }[] };
      key = view.pools.find((p) => p.name === "duo")!.members.flatMap((m) => m.keys).find((k) => k.startsWith("openai:gpt-4o-mini:")) ?? "";
      expect(key).not.toBe("");
    });
    const seen = [[...res.headers].flat().join("\n"), await res.text()];
    for (const path of ["/admin/pools", "/admin/virtual-keys", "/admin/keys", `/admin/keys/${encodeURIComponent(key)}`, "/admin/metrics", "/admin"]) {
      const r = await app.fetch(new Request(`http://gateway${path}`, { headers: admin }), env, createExecutionContext());
      expect(r.status, path).toBe(200);
      seen.push(await r.text());
    }
    const limiterDump = await dumpStorage(env.LIMITER.get(env.LIMITER.idFromName(key)));
    // Every instance of the key store: the old one and the 16 shards.
    const keysDump = (await Promise.all(HOMES.map((home) => dumpStorage(env.VIRTUAL_KEYS.get(env.VIRTUAL_KEYS.idFromName(home)))))).join("\n");
    expect(limiterDump).toContain(key.split(":")[2]);
    expect(keysDump).toContain(name); // the store is really read
    for (const [where, text] of Object.entries({ answers: seen.join("\n"), limiter: limiterDump, store: keysDump, logs: logs.join("\n") }))
      for (const s of secrets) expect(text.includes(s), `${s.slice(0, 8)}... in ${where}`).toBe(false);
  });
});
