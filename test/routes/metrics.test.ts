import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CONTENT_TYPE } from "../../src/observe/prometheus";
import { directoryOf } from "../../src/directory/object";
import { parseExposition, value } from "../support/exposition";
import { callWith } from "../support/app";
import type { Env } from "../../src/env";
import { CHAT, RATE_LIMITED, chat, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

const TOKEN = "test-admin-token";
const admin = (path: string, token: string | null = TOKEN) =>
  exports.default.fetch(`http://gateway${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
const scrape = async () => {
  const res = await admin("/admin/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe(CONTENT_TYPE);
  const text = await res.text();
  return { text, families: parseExposition(text) };
};

describe("GET /admin/metrics", () => {
  it("wants the admin token, as a bearer-token scrape sends it", async () => {
    for (const t of [null, "wrong", `${TOKEN}x`]) expect((await admin("/admin/metrics", t)).status).toBe(401);
    expect((await admin("/admin/metrics")).status).toBe(200);
  });

  it("after traffic, shows the key's counters and gauges, and no credential, prompt or answer anywhere, nor in the event lines", async () => {
    const secret = "sk-metrics-secret-7f3a9c";
    const prompt = "the-prompt-text-5be1 should never be logged";
    const answer = "the-answer-text-c0d2";
    const logs: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(" ")));
    const rl = { "x-ratelimit-limit-requests": "600", "x-ratelimit-remaining-requests": "590", "x-ratelimit-reset-requests": "1s" };
    mockUpstream((_, n) =>
      n === 2 ? json(RATE_LIMITED, 429, { "retry-after-ms": "10", ...rl }) : json({ ...CHAT, choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }] }, 200, rl),
    );
    const body = { model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }], max_tokens: 16 };
    let key = "";
    for (let i = 0; i < 3; i++) {
      const res = await chat({ key: secret, body });
      expect(await res.text()).toContain(answer);
      key = res.headers.get("x-slotgate-key")!;
    }
    const hash = key.split(":")[2]!;
    const k = { provider: "openai", model: "gpt-4o-mini", key_hash: hash };
    // Success settles are fire-and-forget from the Worker: wait until all three have landed.
    await vi.waitFor(async () => expect(value((await scrape()).families, "slotgate_requests_total", { ...k, class: "success" })).toBe(3));
    const { text, families } = await scrape();
    expect(value(families, "slotgate_upstream_attempts_total", { ...k, class: "success" })).toBe(3);
    expect(value(families, "slotgate_upstream_attempts_total", { ...k, class: "rate_limit" })).toBe(1);
    expect(value(families, "slotgate_rate_limits_absorbed_total", k)).toBe(1);
    expect(value(families, "slotgate_upstream_latency_seconds_count", k)).toBe(4);
    expect(value(families, "slotgate_queue_wait_seconds_count", k)).toBe(4);
    expect(value(families, "slotgate_requests_in_flight", k)).toBe(0);
    expect(value(families, "slotgate_quota_limit", { ...k, window: "requests" })).toBe(600);
    expect(value(families, "slotgate_concurrency_limit", k)).toBeGreaterThanOrEqual(1);
    expect(value(families, "slotgate_keys_omitted")).toBe(0);
    expect(value(families, "slotgate_keys_exported")).toBe(value(families, "slotgate_keys"));
    // The 429 was logged (so the log is really being read here), and nothing secret was.
    const events = logs.filter((l) => l.startsWith('{"event":')).map((l) => JSON.parse(l) as { event: string; key: string });
    expect(events.filter((e) => e.key === key).map((e) => e.event)).toEqual(expect.arrayContaining(["ratelimit:hit", "request:retrying", "ratelimit:learned"]));
    const samples = await (await admin(`/admin/keys/${encodeURIComponent(key)}/samples`)).text();
    for (const where of [text, logs.join("\n"), samples]) {
      expect(where).toContain(hash);
      for (const s of [secret, "metrics-secret", prompt, "5be1", answer]) expect(where).not.toContain(s);
    }
  });

  it("counts every upstream attempt by provider and status class, keys that never succeeded too, without listing or storing those keys", async () => {
    // A provider of this test's own (PROVIDERS), so other tests' counts do not mix in.
    const vars = { PROVIDERS: { failing: { baseUrl: "http://failing.example", headers: "openai" } } } as Partial<Env>;
    const post = (key: string, headers: Record<string, string> = {}) =>
      callWith("/failing/v1/chat/completions", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers }, body: JSON.stringify({ model: "m", messages: [] }) }, vars);
    const err = (status: number) => json({ error: { message: "no", type: "invalid_request_error", param: null, code: status === 401 ? "invalid_api_key" : null } }, status);
    mockUpstream((req) => {
      const key = req.headers.get("authorization");
      if (key === "Bearer sk-fail-ok") return json(CHAT);
      if (key === "Bearer sk-fail-bad") return err(401);
      if (key === "Bearer sk-fail-400") return err(400);
      if (key === "Bearer sk-fail-500") return err(500);
      throw new Error("Network connection lost.");
    });
    const two = { "x-slotgate-max-attempts": "2", "x-slotgate-deadline-ms": "5000" };
    const answers = [await post("sk-fail-ok"), await post("sk-fail-bad"), await post("sk-fail-400"), await post("sk-fail-500", two), await post("sk-fail-down", two)];
    expect(answers.map((r) => r.status)).toEqual([200, 401, 400, 500, 502]);
    // A flood of made-up models and labels on a bad key: more attempts, never more series.
    for (let i = 0; i < 5; i++) expect((await post("sk-fail-bad", { "x-slotgate-limit-key": `label-${i}` })).status).toBe(401);

    const f = { provider: "failing" };
    await vi.waitFor(async () => expect(value((await scrape()).families, "slotgate_provider_attempts_total", { ...f, status_class: "4xx" })).toBe(7), { timeout: 5_000, interval: 200 });
    const { families } = await scrape();
    const counts = Object.fromEntries(["2xx", "3xx", "4xx", "5xx", "unreachable"].map((c) => [c, value(families, "slotgate_provider_attempts_total", { ...f, status_class: c })]));
    expect(counts).toEqual({ "2xx": 1, "3xx": 0, "4xx": 7, "5xx": 2, unreachable: 2 });
    const series = families.find((x) => x.name === "slotgate_provider_attempts_total")!.samples.filter((x) => x.labels.provider === "failing");
    expect(series).toHaveLength(5);
    // The same through the admin JSON the dashboard reads.
    const upstream = (await (await admin("/admin/upstream")).json()) as { providers: { provider: string; counts: Record<string, number>; lastAt: string }[] };
    expect(upstream.providers.find((p) => p.provider === "failing")).toMatchObject({ counts, lastAt: expect.any(String) });

    // The keys that only failed are not listed, and kept nothing; asking for one says why, with its numbers.
    const bad = answers[1]!.headers.get("x-slotgate-key")!;
    expect(await directoryOf(env.DIRECTORY).get(bad)).toBeNull();
    const listed = (await (await admin("/admin/keys")).json()) as { keys: { key: string }[] };
    expect(listed.keys.map((k) => k.key)).not.toContain(bad);
    const asked = await admin(`/admin/keys/${encodeURIComponent(bad)}`);
    expect(asked.status).toBe(404);
    const message = ((await asked.json()) as { error: { message: string } }).error.message;
    expect(message).toMatch(/kept and listed only from its first 2xx answer.*every attempt failed.*GET \/admin\/upstream/);
  });

  it("lists only keys the Directory knows; an unknown key has no samples route", async () => {
    const res = await admin(`/admin/keys/${encodeURIComponent("openai:nobody:0000000000000000")}/samples`);
    expect(res.status).toBe(404);
    expect((await scrape()).text).not.toContain("nobody");
  });

  it("a limiter that does not answer leaves its key out and is counted, the rest still render", async () => {
    mockUpstream(() => json(CHAT));
    const res = await chat({ key: "sk-metrics-broken" });
    await res.arrayBuffer();
    // A key is listed from its first 2xx, reported from inside its Limiter once the settle lands.
    await vi.waitFor(async () => expect(await directoryOf(env.DIRECTORY).get(res.headers.get("x-slotgate-key")!)).not.toBeNull());
    const before = (await scrape()).families;
    const known = value(before, "slotgate_keys");
    const real = env.LIMITER.get.bind(env.LIMITER);
    let calls = 0;
    vi.spyOn(env.LIMITER, "get").mockImplementation((id: DurableObjectId) => {
      const stub = real(id);
      // The first limiter asked fails; every other answers.
      return (calls++ === 0 ? { metrics: () => Promise.reject(new Error("gone")) } : stub) as typeof stub;
    });
    const after = (await scrape()).families;
    expect(value(after, "slotgate_keys_unanswered")).toBe(1);
    expect(value(after, "slotgate_keys_exported")).toBe(known - 1);
  });
});
