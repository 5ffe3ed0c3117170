import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CHAT, RATE_LIMITED, chat, json, mockUpstream } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("proxy", () => {
  it("forwards to the provider and returns its answer with the gateway headers", async () => {
    const { calls } = mockUpstream(() => json(CHAT, 200, { "x-ratelimit-remaining-requests": "499", "x-ratelimit-limit-requests": "500", "x-ratelimit-reset-requests": "120ms" }));
    const res = await chat({ path: "/openai/v1/chat/completions?x=1", headers: { "x-slotgate-limit-key": "evals", "cf-connecting-ip": "1.2.3.4", "openai-project": "proj_1" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(CHAT);
    expect(res.headers.get("x-slotgate-attempts")).toBe("1");
    expect(res.headers.get("x-slotgate-queue-ms")).toMatch(/^\d+$/);
    expect(res.headers.get("x-slotgate-key")).toMatch(/^openai:evals:[0-9a-f]{16}$/);
    expect(calls[0]!.url).toBe("https://api.openai.com/v1/chat/completions?x=1");
    expect(calls[0]!.headers.get("authorization")).toBe("Bearer sk-test");
    expect(calls[0]!.headers.get("openai-project")).toBe("proj_1");
    expect(calls[0]!.headers.get("x-slotgate-limit-key")).toBeNull();
    expect(calls[0]!.headers.get("cf-connecting-ip")).toBeNull();
    expect(JSON.parse(calls[0]!.body)).toMatchObject({ model: "gpt-4o-mini" });
  });

  it("never tells a caller to stop on a success: the provider's quota headers come under x-slotgate-provider-", async () => {
    // promptfoo re-sends a 200 whose x-ratelimit-remaining-requests or -tokens is 0; a gateway
    // pacing at the limit makes that the usual reading.
    mockUpstream(() => json(CHAT, 200, { "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-limit-requests": "500", "x-request-id": "req_9" }));
    const res = await chat({ key: "sk-remaining-zero" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-remaining-requests")).toBeNull();
    expect(res.headers.get("x-ratelimit-remaining-tokens")).toBeNull();
    expect(res.headers.get("x-slotgate-provider-x-ratelimit-remaining-requests")).toBe("0");
    expect(res.headers.get("x-slotgate-provider-x-ratelimit-limit-requests")).toBe("500");
    expect(res.headers.get("x-request-id")).toBe("req_9");
    expect(res.headers.get("x-slotgate-limit")).toMatch(/^\d+$/);
  });

  it("an upstream error the caller gets keeps the provider's headers as they were", async () => {
    const body = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
    mockUpstream(() => json(body, 429, { "x-ratelimit-remaining-requests": "0", "retry-after": "20" }));
    const res = await chat({ key: "sk-remaining-error" });
    expect(res.status).toBe(429);
    expect(res.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(res.headers.get("retry-after")).toBe("20");
  });

  it("keys by provider, model and a hash of the credential and project, never the credential itself", async () => {
    mockUpstream(() => json(CHAT));
    const a = (await chat({ key: "sk-aaa" })).headers.get("x-slotgate-key")!;
    const b = (await chat({ key: "sk-bbb" })).headers.get("x-slotgate-key")!;
    const c = (await chat({ key: "sk-aaa", headers: { "openai-project": "p2" } })).headers.get("x-slotgate-key")!;
    const d = (await chat({ key: "sk-aaa", model: "gpt-4o" })).headers.get("x-slotgate-key")!;
    expect(a).toMatch(/^openai:gpt-4o-mini:[0-9a-f]{16}$/);
    expect(new Set([a, b, c, d]).size).toBe(4);
    expect(a).not.toContain("sk-aaa");
  });

  it("retries a 429 and the caller sees the 200", async () => {
    const { calls } = mockUpstream((_, n) => (n === 1 ? json(RATE_LIMITED, 429, { "retry-after-ms": "20" }) : json(CHAT)));
    const res = await chat({ key: "sk-retry" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-slotgate-attempts")).toBe("2");
    expect(calls).toHaveLength(2);
  });

  it("retries 5xx, 524 and 529 without the caller seeing them", async () => {
    const faults = [
      new Response("<html>A Timeout Occurred</html>", { status: 524, statusText: "A Timeout Occurred" }),
      json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, 529),
      json({ error: { message: "upstream", type: "server_error" } }, 503),
    ];
    mockUpstream((_, n) => faults[n - 1] ?? json(CHAT));
    const res = await chat({ key: "sk-faults", headers: { "x-slotgate-max-attempts": "4" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-slotgate-attempts")).toBe("4");
  });

  it("returns insufficient_quota at once, after exactly one attempt, body unchanged", async () => {
    const body = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
    const { calls } = mockUpstream(() => json(body, 429, { "x-request-id": "req_1" }));
    const res = await chat({ key: "sk-broke" });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual(body);
    expect(res.headers.get("x-request-id")).toBe("req_1");
    expect(res.headers.get("x-slotgate-attempts")).toBe("1");
    expect(calls).toHaveLength(1);
  });

  it("hands back the provider's last error unchanged when attempts run out", async () => {
    mockUpstream(() => json({ error: { message: "down" } }, 503, { "retry-after-ms": "5" }));
    const res = await chat({ key: "sk-down", headers: { "x-slotgate-max-attempts": "2" } });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: { message: "down" } });
    expect(res.headers.get("x-slotgate-attempts")).toBe("2");
  });

  it("a hint longer than the deadline sends the 429 back at once with the provider's retry-after", async () => {
    const { calls } = mockUpstream(() => json(RATE_LIMITED, 429, { "retry-after": "3600" }));
    const res = await chat({ key: "sk-long-hint", headers: { "x-slotgate-deadline-ms": "60000" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3600");
    expect(calls).toHaveLength(1);
    // At once: it neither waited out the hint nor its 60 s deadline (the test would time out first).
    expect(res.headers.get("x-slotgate-attempts")).toBe("1");
  });

  it("while one caller's retry-after runs, no other caller of that key goes upstream", async () => {
    let first = true;
    const { calls } = mockUpstream(() => {
      if (first) {
        first = false;
        return json(RATE_LIMITED, 429, { "retry-after": "2" });
      }
      return json(CHAT);
    });
    const limited = chat({ key: "sk-gate" });
    await sleep(100); // the 429 has come back and shut the gate
    const others = await Promise.all([chat({ key: "sk-gate" }), chat({ key: "sk-gate" }), chat({ key: "sk-gate" })]);
    const res = await limited;
    expect([res.status, ...others.map((r) => r.status)]).toEqual([200, 200, 200, 200]);
    const gateOpens = calls[0]!.at + 2_000;
    for (const c of calls.slice(1)) expect(c.at).toBeGreaterThanOrEqual(gateOpens - 5);
  });

  it("one shared limit: 200 callers, a key limited to 10, a provider that takes all: the gateway never sends more than 10 at once", async () => {
    let inFlight = 0;
    let peak = 0;
    // This provider enforces nothing: every request it gets is counted, so only the gateway can keep the peak down.
    mockUpstream(async () => {
      peak = Math.max(peak, ++inFlight);
      await sleep(10);
      inFlight--;
      return json(CHAT);
    });
    const first = await chat({ key: "sk-shared-cap" });
    const stub = env.LIMITER.get(env.LIMITER.idFromName(first.headers.get("x-slotgate-key")!));
    await vi.waitFor(async () => expect((await stub.state()).concurrency.inFlight).toBe(0));
    await stub.configure({ maxConcurrency: 10, limit: 10 });
    peak = 0;
    const all = await Promise.all(Array.from({ length: 200 }, () => chat({ key: "sk-shared-cap" })));
    expect(all.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    expect(peak).toBeLessThanOrEqual(10);
    expect(peak).toBeGreaterThan(1); // the limit is used, not just respected by going one at a time
  });

  it("200 callers against a provider that refuses past 10 in flight: all answered, the limiter finds the cap", async () => {
    let inFlight = 0;
    let sentPeak = 0;
    let refused = 0;
    mockUpstream(async () => {
      // Every request the gateway sends counts while the provider handles it, refused or not.
      sentPeak = Math.max(sentPeak, ++inFlight);
      if (inFlight > 10) {
        refused++;
        inFlight--;
        return json(RATE_LIMITED, 429, { "retry-after-ms": "50" });
      }
      await sleep(15);
      inFlight--;
      return json(CHAT);
    });
    const all = await Promise.all(Array.from({ length: 200 }, () => chat({ key: "sk-storm" })));
    expect(all.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const key = all[0]!.headers.get("x-slotgate-key")!;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    // The last releases ride their sessions, just after the answers have gone back.
    await vi.waitFor(async () => expect((await stub.state()).concurrency.inFlight).toBe(0));
    const state = await stub.state();
    // Never more at once than the highest limit the key ever had (the start limit, or a step up in its history).
    expect(sentPeak).toBeLessThanOrEqual(Math.max(16, ...state.history.map((h) => h.to)));
    expect(state.concurrency.limit).toBeLessThanOrEqual(16);
    expect(state.history.some((h) => h.reason === "rate_limit")).toBe(true);
    expect(state.metrics.completedRequests).toBe(200);
    // The limiter learns: most attempts went through, not a storm of refusals.
    expect(refused).toBeLessThan(100);
  });

  it("streams SSE through chunk by chunk: the first event arrives while the provider is still writing", async () => {
    let release!: () => void;
    const secondMayGo = new Promise<void>((r) => (release = r));
    const enc = new TextEncoder();
    mockUpstream(() => {
      const stream = new ReadableStream({
        async start(ctrl) {
          ctrl.enqueue(enc.encode('data: {"n":1}\n\n'));
          await secondMayGo;
          ctrl.enqueue(enc.encode("data: [DONE]\n\n"));
          ctrl.close();
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    });
    const res = await chat({ key: "sk-sse", body: { model: "gpt-4o-mini", stream: true, messages: [] } });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toBe('data: {"n":1}\n\n');
    const key = res.headers.get("x-slotgate-key")!;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    expect((await stub.state()).concurrency.inFlight).toBe(1); // the slot is held while streaming
    release();
    let rest = "";
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe("data: [DONE]\n\n");
    await vi.waitFor(async () => expect((await stub.state()).concurrency.inFlight).toBe(0));
  });
});

describe("gateway errors", () => {
  const error = async (res: Response) => ({ status: res.status, body: await res.json(), code: res.headers.get("x-slotgate-error") });

  it("404 unknown_provider", async () => {
    const res = await exports.default.fetch("http://gateway/nope/v1/chat/completions", { method: "POST" });
    expect(await error(res)).toMatchObject({ status: 404, code: "unknown_provider", body: { error: { type: "unknown_provider" } } });
  });

  it("413 body_too_large, and nothing goes upstream", async () => {
    const { calls } = mockUpstream(() => json(CHAT));
    const big = "x".repeat(10 * 1024 * 1024 + 1);
    const res = await exports.default.fetch("http://gateway/openai/v1/chat/completions", { method: "POST", body: big });
    expect(await error(res)).toMatchObject({ status: 413, code: "body_too_large" });
    expect(calls).toHaveLength(0);
  });

  it("429 queue_timeout with retry-after when no slot frees in time", async () => {
    let releaseUpstream!: () => void;
    const held = new Promise<void>((r) => (releaseUpstream = r));
    let n = 0;
    mockUpstream(async () => {
      if (++n > 1) await held;
      return json(CHAT);
    });
    const key = (await chat({ key: "sk-timeout" })).headers.get("x-slotgate-key")!;
    const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
    // The first answer's settle lands before the limit is set, so it cannot grow it past 1.
    await vi.waitFor(async () => expect((await stub.state()).concurrency.inFlight).toBe(0));
    await stub.configure({ limit: 1 });
    const holder = chat({ key: "sk-timeout" });
    await sleep(50);
    const res = await chat({ key: "sk-timeout", headers: { "x-slotgate-deadline-ms": "200" } });
    expect(await error(res)).toMatchObject({ status: 429, code: "queue_timeout", body: { error: { type: "queue_timeout" } } });
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(res.headers.get("x-slotgate-attempts")).toBe("0");
    releaseUpstream();
    expect((await holder).status).toBe(200);
  });

  it("400 invalid_request for a path that climbs out, or a bad per-request header", async () => {
    mockUpstream(() => json(CHAT));
    for (const [path, headers] of [
      ["/openai/v1/..%2Fadmin", {}],
      ["/openai/v1/chat/completions", { "x-slotgate-max-attempts": "many" }],
      ["/openai/v1/chat/completions", { "x-slotgate-limit-key": "a b" }],
      ["/azure/evil.com%2F/openai/deployments/x/chat/completions", {}],
      // A malformed escape (the model is read from the path decoded): 400, not a 500.
      ["/gemini/v1beta/models/%ZZ:generateContent", {}],
      ["/openai/v1/files/%E0%A4%A/content", {}],
    ] as const) {
      const res = await exports.default.fetch(`http://gateway${path}`, { method: "POST", headers, body: "{}" });
      expect(await error(res)).toMatchObject({ status: 400, code: "invalid_request" });
    }
  });
});
