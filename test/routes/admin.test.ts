import { env, exports } from "cloudflare:workers";
import { createExecutionContext, listDurableObjectIds, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import app from "../../src/index";
import { ADMIN_OFF } from "../../src/routes/admin-off";
import type { LimiterSnapshot } from "../../src/limiter/types";
import { CHAT, chat, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

const TOKEN = "test-admin-token";
const PLANTED = "sk-planted-secret-123";

function call(path: string, init: { method?: string; body?: unknown; token?: string | null; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token !== null) headers.authorization = `Bearer ${init.token ?? TOKEN}`;
  const body = init.body === undefined ? undefined : typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  return exports.default.fetch(`http://gateway${path}`, { method: init.method ?? "GET", headers, body });
}
const keyPath = (key: string) => `/admin/keys/${encodeURIComponent(key)}`;
const error = async (res: Response) => ({ status: res.status, code: res.headers.get("x-slotgate-error"), body: (await res.json()) as { error: { type: string; message: string } } });

/** Sends one request through the proxy with `credential` and waits until the Directory lists its key. */
async function seenKey(credential: string, headers: Record<string, string> = {}): Promise<string> {
  mockUpstream(() => json(CHAT, 200, { "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-requests": "120ms" }));
  const res = await chat({ key: credential, headers });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const key = res.headers.get("x-slotgate-key")!;
  await vi.waitFor(async () => expect((await call(keyPath(key))).status).toBe(200));
  // Its settle and release ride its session, just after the answer has gone back.
  await vi.waitFor(async () => expect((await stateOf(key)).concurrency.inFlight).toBe(0));
  return key;
}
const stateOf = async (key: string) => (await (await call(keyPath(key))).json()) as LimiterSnapshot;

describe("admin auth", () => {
  const routes: [string, string, unknown?][] = [
    ["GET", "/admin/keys"],
    ["GET", "/admin/keys/openai%3Agpt-4o-mini%3A0000000000000000"],
    ["PUT", "/admin/keys/openai%3Agpt-4o-mini%3A0000000000000000/config", { limit: 2 }],
    ["POST", "/admin/keys/openai%3Agpt-4o-mini%3A0000000000000000/reset"],
    ["GET", "/admin/keys/openai%3Agpt-4o-mini%3A0000000000000000/samples"],
    ["GET", "/admin/metrics"],
    ["GET", "/admin/anything"],
  ];

  it("401 unauthorized without a token or with a wrong one, on every API route", async () => {
    for (const [method, path, body] of routes)
      for (const token of [null, "wrong", "", `${TOKEN}x`]) {
        const res = await call(path, { method, body, token });
        expect(await error(res)).toMatchObject({ status: 401, code: "unauthorized", body: { error: { type: "unauthorized" } } });
      }
    const basic = await call("/admin/keys", { token: null, headers: { authorization: `Basic ${btoa(`admin:${TOKEN}`)}` } });
    expect(basic.status).toBe(401);
  });

  it("the right token is let in", async () => {
    const res = await call("/admin/keys");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await call("/admin/keys", { token: null, headers: { authorization: `bearer   ${TOKEN}` } })).toHaveProperty("status", 200);
  });

  it("with no ADMIN_TOKEN configured, every /admin route answers 404 saying admin is off and how to turn it on, the dashboard too", async () => {
    const bare = { ...env, ADMIN_TOKEN: undefined };
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    for (const [method, path] of [["GET", "/admin"], ["GET", "/admin/"], ["GET", "/admin/dashboard.js"], ...routes] as [string, string][]) {
      for (const auth of [undefined, `Bearer ${TOKEN}`, "Bearer undefined", "Bearer "]) {
        const ctx = createExecutionContext();
        const req = new Request(`http://gateway${path}`, { method, headers: auth ? { authorization: auth } : {} });
        const res = await app.fetch(req, bare, ctx);
        await waitOnExecutionContext(ctx);
        // The contract's 404, and only this: no dashboard, nothing of the gateway but that admin is off.
        expect(await error(res), `${method} ${path}`).toEqual({ status: 404, code: "not_found", body: { error: { type: "not_found", message: ADMIN_OFF } } });
      }
    }
    expect(ADMIN_OFF).toMatch(/^admin routes are not enabled: .*ADMIN_TOKEN.*\.dev\.vars.*secret put ADMIN_TOKEN/);
    // A browser asking for the dashboard gets the same as a page, never the dashboard.
    const page = await app.fetch(new Request("http://gateway/admin", { headers: { accept: "text/html,application/xhtml+xml" } }), bare, createExecutionContext());
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("Admin routes are not enabled");
    expect(html).toContain("secret put ADMIN_TOKEN");
    expect(html).not.toContain("dashboard.js");
    const empty = await app.fetch(new Request("http://gateway/admin/keys", { headers: { authorization: "Bearer " } }), { ...env, ADMIN_TOKEN: "" }, createExecutionContext());
    expect(empty.status).toBe(404);
    // The Worker's log says it too, once an isolate, where the operator looks (wrangler dev's terminal, Workers Logs).
    expect(warned.mock.calls.filter(([line]) => String(line).includes("admin routes are not enabled")).length).toBe(1);
  });

  it("an unknown /admin path is the admin's 404, never read as a provider named admin", async () => {
    const res = await call("/admin/v1/chat/completions", { method: "POST", body: {} });
    expect(await error(res)).toMatchObject({ status: 404, body: { error: { type: "not_found" } } });
  });
});

describe("admin API", () => {
  it("GET /admin/keys lists keys after traffic, with the contract's fields and live numbers", async () => {
    const key = await seenKey("sk-list-1");
    // Live, not the Directory's last report: a change shows at once.
    await env.LIMITER.get(env.LIMITER.idFromName(key)).configure({ limit: 9 });
    const body = (await (await call("/admin/keys")).json()) as { keys: Record<string, unknown>[]; total: number };
    expect(Object.keys(body)).toEqual(["keys", "total"]);
    const entry = body.keys.find((k) => k.key === key)!;
    expect(entry).toEqual({
      key,
      provider: "openai",
      model: "gpt-4o-mini",
      limit: 9,
      inFlight: 0,
      queued: 0,
      lastSeen: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      phase: "steady", // a manual limit ends slow start
      cooldownUntil: null,
      metrics: expect.objectContaining({ totalRequests: 1, completedRequests: 1, rateLimitHits: 0, retriedRequests: 0, p50LatencyMs: expect.any(Number), p99LatencyMs: expect.any(Number) }),
      live: true,
      // Told apart from other keys of the model: no pool member, and who used it (nobody named: the default caller).
      member: null,
      caller: "(default)",
    });
    expect(body.total).toBeGreaterThanOrEqual(body.keys.length);
    const seen = body.keys.map((k) => k.lastSeen as string);
    expect(seen).toEqual([...seen].sort().reverse());
  });

  it("GET /admin/keys/:key returns the limiter's full state", async () => {
    const key = await seenKey("sk-state-1");
    const res = await call(keyPath(key));
    expect(res.status).toBe(200);
    const s = (await res.json()) as LimiterSnapshot;
    expect(Object.keys(s).sort()).toEqual(["callers", "concurrency", "config", "cooldownUntil", "history", "key", "lastSeen", "metrics", "model", "out", "provider", "quotas", "ratePerMin"]);
    expect(s).toMatchObject({ key, provider: "openai", model: "gpt-4o-mini", cooldownUntil: null, config: {} });
    expect(Object.keys(s.concurrency).sort()).toEqual(["inFlight", "limit", "max", "min", "phase", "queued", "tickets"]);
    expect(s.quotas.requests).toMatchObject({ limit: 500, remaining: expect.any(Number) });
    expect(s.quotas.tokens).toBeNull();
    expect(Object.keys(s.metrics).sort()).toEqual(["avgLatencyMs", "completedRequests", "failedRequests", "p50LatencyMs", "p99LatencyMs", "rateLimitHits", "retriedRequests", "totalRequests"]);
    expect(Array.isArray(s.history)).toBe(true);
    // Nobody sent x-slotgate-caller: one default caller, served once, with the whole minute's share.
    expect(s.callers).toEqual([{ caller: "(default)", lane: "normal", inFlight: 0, queued: 0, served: 1, share: 1, lastSeen: expect.any(String) }]);
  });

  it("a key with a slash in it works URL-encoded", async () => {
    const key = await seenKey("sk-slash", { "x-slotgate-limit-key": "team/evals" });
    expect(key).toMatch(/^openai:team\/evals:[0-9a-f]{16}$/);
    expect((await stateOf(key)).model).toBe("team/evals");
    expect((await call(`${keyPath(key)}/reset`, { method: "POST" })).status).toBe(200);
  });

  it("404 unknown_key for a key no limiter has seen, and looking creates no limiter", async () => {
    const before = (await listDurableObjectIds(env.LIMITER)).length;
    const unknown = "openai:never-seen:ffffffffffffffff";
    for (const [method, suffix, body] of [["GET", ""], ["PUT", "/config", { limit: 2 }], ["POST", "/reset"]] as const) {
      const res = await call(`${keyPath(unknown)}${suffix}`, { method, body });
      expect(await error(res)).toMatchObject({ status: 404, code: "unknown_key", body: { error: { type: "unknown_key" } } });
    }
    expect((await listDurableObjectIds(env.LIMITER)).length).toBe(before);
  });

  it("PUT config applies a valid partial config and answers the new state", async () => {
    const key = await seenKey("sk-config-ok");
    const res = await call(`${keyPath(key)}/config`, { method: "PUT", body: { maxConcurrency: 64, limit: 7, decreaseFactor: 0.7 } });
    expect(res.status).toBe(200);
    const s = (await res.json()) as LimiterSnapshot;
    expect(s.concurrency).toMatchObject({ limit: 7, max: 64 });
    expect(s.config).toEqual({ maxConcurrency: 64, decreaseFactor: 0.7 });
    expect(s.history.at(-1)).toMatchObject({ to: 7, reason: "manual" });
    expect(await stateOf(key)).toMatchObject({ concurrency: { limit: 7, max: 64 } });
  });

  it("PUT config refuses bad input with 400 invalid_config naming the field, and changes nothing", async () => {
    const key = await seenKey("sk-config-bad");
    await call(`${keyPath(key)}/config`, { method: "PUT", body: { maxConcurrency: 100, limit: 6 } });
    const before = await stateOf(key);
    const cases: [unknown, RegExp][] = [
      [{ limit: 5, bogus: 1 }, /^bogus: /],
      [{ minConcurrency: "2" }, /^minConcurrency: /],
      [{ limit: 2.5 }, /^limit: /],
      [{ minConcurrency: 50, maxConcurrency: 10 }, /^minConcurrency: .*maxConcurrency/],
      [{ minConcurrency: 200 }, /^minConcurrency: .*maxConcurrency/],
      [{ decreaseFactor: 1.5 }, /^decreaseFactor: /],
      [{ decreaseFactor: 0 }, /^decreaseFactor: /],
      [{ limit: 1000 }, /^limit: .*\[1, 100\]/],
      [{ limit: 0 }, /^limit: /],
      [[1, 2], /^body: /],
      ["not json", /^body: /],
      [null, /^body: /],
    ];
    for (const [body, message] of cases) {
      const res = await call(`${keyPath(key)}/config`, { method: "PUT", body: body === null ? "null" : body });
      const e = await error(res);
      expect(e, JSON.stringify(body)).toMatchObject({ status: 400, code: "invalid_config", body: { error: { type: "invalid_config" } } });
      expect(e.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    const after = await stateOf(key);
    expect(after.config).toEqual(before.config);
    expect(after.concurrency).toEqual(before.concurrency);
    expect(after.history).toEqual(before.history);
  });

  it("POST reset puts the key back to defaults with metrics cleared", async () => {
    const key = await seenKey("sk-reset");
    await call(`${keyPath(key)}/config`, { method: "PUT", body: { maxConcurrency: 32, limit: 20 } });
    const res = await call(`${keyPath(key)}/reset`, { method: "POST" });
    expect(res.status).toBe(200);
    const s = (await res.json()) as LimiterSnapshot;
    expect(s.concurrency).toMatchObject({ limit: 16, min: 1, max: 256, phase: "slow_start" });
    expect(s.config).toEqual({});
    expect(s.history).toEqual([]);
    expect(s.quotas).toEqual({ requests: null, tokens: null });
    expect(s.metrics).toMatchObject({ totalRequests: 0, completedRequests: 0, rateLimitHits: 0 });
    expect(await stateOf(key)).toMatchObject({ config: {}, concurrency: { limit: 16 } });
  });
});

describe("admin never shows a credential", () => {
  it("a planted credential appears in no admin answer and not in the dashboard", async () => {
    const key = await seenKey(PLANTED, { "openai-organization": PLANTED });
    expect(key).not.toContain(PLANTED);
    const answers = [
      await call("/admin/keys"),
      await call(keyPath(key)),
      await call(`${keyPath(key)}/config`, { method: "PUT", body: { limit: 3 } }),
      await call(`${keyPath(key)}/config`, { method: "PUT", body: { nope: PLANTED } }),
      await call(`${keyPath(key)}/reset`, { method: "POST" }),
      await call("/admin", { token: null }),
      await call("/admin"),
    ];
    for (const res of answers) {
      expect(res.status).toBeLessThan(500);
      expect(await res.text()).not.toContain(PLANTED);
      expect([...res.headers].join("\n")).not.toContain(PLANTED);
    }
    const dir = await env.DIRECTORY.get(env.DIRECTORY.idFromName("directory")).list();
    expect(JSON.stringify(dir)).not.toContain(PLANTED);
  });
});

describe("dashboard", () => {
  it("GET /admin serves the HTML shell without the token: no external URL, no data, only its own two files, a strict CSP", async () => {
    const res = await call("/admin", { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html.startsWith("<!doctype html>")).toBe(true);
    for (const id of ["login", "token", "keys", "pools", "detail", "chart", "legend"]) expect(html).toContain(`id="${id}"`);
    for (const reason of ["slow_start", "steady_up", "rate_limit", "quota", "manual"]) expect(html).toContain(`r-${reason}`);
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/https?:\/\//i);
    expect(html).not.toContain(TOKEN);
    expect(html).not.toMatch(/<(img|iframe)\b/i);
    // Nothing inline: its script and style are its own files, which the CSP alone allows.
    expect(html).not.toMatch(/<script>|<style/i);
    expect([...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]).sort()).toEqual(["/admin/dashboard.css", "/admin/dashboard.js"]);
    const csp = res.headers.get("content-security-policy")!;
    for (const d of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(d);
    expect(csp).not.toMatch(/unsafe-inline/);
  });

  it("the page's script and stylesheet come without the token, are what they say, and keep the token in a header", async () => {
    const js = await call("/admin/dashboard.js", { token: null });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    expect(js.headers.get("content-security-policy")).toContain("default-src 'none'");
    const script = await js.text();
    expect(() => new Function(script)).not.toThrow();
    // The script keeps the token client-side and sends it as a header, never in a URL.
    expect(script).toMatch(/authorization:\s*"Bearer "\s*\+\s*\w+/);
    expect(script).toMatch(/sessionStorage/);
    expect(script).not.toMatch(/[?&]token=/);
    const css = await call("/admin/dashboard.css", { token: null });
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/text\/css/);
    // Any other file under /admin still needs the token.
    expect((await call("/admin/index.html", { token: null })).status).toBe(401);
  });
});
