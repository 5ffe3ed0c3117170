// Traces through the Worker in workerd: requests with OTEL_* set go through the whole pipeline to a
// scripted provider, and a fake OTLP receiver (the same fetch mock, by URL) gets what the isolate
// exports; the test decodes it as a collector would. Then the gen_ai_* metrics the key counted.
import { env } from "cloudflare:workers";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
} from "@opentelemetry/semantic-conventions/incubating";
import { ATTR_ERROR_TYPE } from "@opentelemetry/semantic-conventions";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import { callWith } from "../support/app";
import { parseExposition } from "../support/exposition";
import { decodeSpans, type Decoded } from "../support/otlp";
import { CHAT, RATE_LIMITED, json } from "../support/upstream";

afterEach(() => vi.restoreAllMocks());

const COLLECTOR = "http://otel-collector.test:4318";
const SECRET = "otlp-header-secret-6c1d9e";
const TRACED: Partial<Env> = { OTEL_EXPORTER_OTLP_ENDPOINT: COLLECTOR, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET}`, OTEL_BSP_SCHEDULE_DELAY: "0" };
const PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN = "00f067aa0ba902b7";
const USAGE = { ...CHAT, model: "gpt-4o-mini-2024-07-18", usage: { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 } };

/** The provider answers by `answer`; the collector takes every POST to /v1/traces. Both are recorded. */
function scripted(answer: (n: number) => Response, collector: () => Response = () => new Response("{}")) {
  const exported: { headers: Headers; body: string }[] = [];
  const upstream: Request[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input as RequestInfo, init as RequestInit);
    if (req.url.startsWith(COLLECTOR)) {
      expect(req.url).toBe(`${COLLECTOR}/v1/traces`);
      exported.push({ headers: req.headers, body: await req.text() });
      return collector();
    }
    upstream.push(req);
    return answer(upstream.length);
  });
  return { exported, upstream, spans: () => exported.flatMap((e) => decodeSpans(JSON.parse(e.body))) };
}

const chat = (key: string, headers: Record<string, string> = {}, vars: Partial<Env> = TRACED) =>
  callWith(
    "/openai/v1/chat/completions",
    {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 16 }),
    },
    vars,
  );

const of = (spans: Decoded[], traceId: string) => spans.filter((s) => s.traceId === traceId);

describe("traces through the Worker (OTLP/HTTP JSON)", () => {
  it("a request's span is the caller's traceparent's child, with the GenAI attributes, and a child per attempt", async () => {
    const r = scripted((n) => (n === 1 ? json(RATE_LIMITED, 429, { "retry-after-ms": "10" }) : json(USAGE)));
    const res = await chat("sk-otel-retry", { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01`, "x-slotgate-caller": "evals", "x-slotgate-priority": "high" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-slotgate-attempts")).toBe("2");
    const key = res.headers.get("x-slotgate-key")!;
    const spans = of(r.spans(), PARENT_TRACE);
    const root = spans.find((s) => s.kind === 2)!;
    expect(root).toBeDefined();
    expect(root.parentSpanId).toBe(PARENT_SPAN);
    expect(root.name).toBe("chat gpt-4o-mini");
    expect(root.resource["service.name"]).toBe("slotgate");
    expect(root.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: "chat",
      [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4o-mini",
      [ATTR_GEN_AI_RESPONSE_MODEL]: "gpt-4o-mini-2024-07-18",
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 21,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 9,
      "slotgate.attempts": 2,
      "slotgate.limiter.key": key,
      "slotgate.caller": "evals",
      "slotgate.lane": "high",
    });
    expect(root.attributes["slotgate.queue_ms"]).toEqual(expect.any(Number));
    expect(root.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    const attempts = spans.filter((s) => s.kind === 3).sort((a, b) => Number(a.attributes["slotgate.attempt"]) - Number(b.attributes["slotgate.attempt"]));
    expect(attempts.map((a) => a.attributes["slotgate.attempt"])).toEqual([1, 2]);
    expect(attempts.every((a) => a.parentSpanId === root.spanId)).toBe(true);
    expect(attempts[0]!.attributes[ATTR_ERROR_TYPE]).toBe("429");
    expect(attempts[1]!.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    // Each attempt went upstream as its own span's child.
    expect(r.upstream.map((u) => u.headers.get("traceparent"))).toEqual(attempts.map((a) => `00-${PARENT_TRACE}-${a.spanId}-01`));
    // The exporter's headers went to the collector, and nowhere into what it was sent.
    expect(r.exported[0]!.headers.get("authorization")).toBe(`Bearer ${SECRET}`);
    expect(r.exported[0]!.headers.get("content-type")).toBe("application/json");
    for (const e of r.exported) expect(e.body).not.toContain(SECRET);
    expect(JSON.stringify(spans)).not.toContain("sk-otel-retry");
  });

  it("an invalid traceparent is ignored: a new trace, its span a root", async () => {
    const r = scripted(() => json(USAGE));
    const res = await chat("sk-otel-badparent", { traceparent: `00-${PARENT_TRACE.toUpperCase()}-${PARENT_SPAN}-01` });
    expect(res.status).toBe(200);
    const roots = r.spans().filter((s) => s.kind === 2 && s.attributes["slotgate.limiter.key"] === res.headers.get("x-slotgate-key"));
    expect(roots).toHaveLength(1);
    expect(roots[0]!.traceId).not.toBe(PARENT_TRACE);
    expect(roots[0]!.parentSpanId).toBeUndefined();
  });

  it("a failed request's span says how: error.type and an error status", async () => {
    const r = scripted(() => json({ error: { message: "bad", type: "invalid_request_error" } }, 400));
    const res = await chat("sk-otel-400", { traceparent: `00-${"1".repeat(32)}-${PARENT_SPAN}-01` });
    expect(res.status).toBe(400);
    const root = of(r.spans(), "1".repeat(32)).find((s) => s.kind === 2)!;
    expect(root.attributes[ATTR_ERROR_TYPE]).toBe("400");
    expect(root.status.code).toBe(2);
  });

  it("off when unset: no span, nothing sent but the request itself", async () => {
    const r = scripted(() => json(USAGE));
    const res = await chat("sk-otel-off", { traceparent: `00-${PARENT_TRACE}-${PARENT_SPAN}-01` }, {});
    expect(res.status).toBe(200);
    expect(r.exported).toHaveLength(0);
    expect(r.upstream).toHaveLength(1);
    // The caller's own context goes on untouched.
    expect(r.upstream[0]!.headers.get("traceparent")).toBe(`00-${PARENT_TRACE}-${PARENT_SPAN}-01`);
  });

  it("a collector that refuses costs the caller nothing, and its warning names no header", async () => {
    const logs: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(" ")));
    const r = scripted(() => json(USAGE), () => new Response("no", { status: 503 }));
    const res = await chat("sk-otel-refused");
    expect(res.status).toBe(200);
    expect(r.exported.length).toBeGreaterThan(0);
    expect(logs.some((l) => /spans not exported: status 503/.test(l))).toBe(true);
    expect(logs.join("\n")).not.toContain(SECRET);
  });

  it("OTEL_EXPORTER_OTLP_HEADERS stays out of the admin JSON, the metrics and the logs, even when malformed", async () => {
    const logs: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(String).join(" ")));
    scripted(() => json(USAGE));
    const res = await chat("sk-otel-admin");
    const key = res.headers.get("x-slotgate-key")!;
    const admin = { headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` } };
    const seen = await Promise.all(
      ["/admin/keys", `/admin/keys/${encodeURIComponent(key)}`, "/admin/metrics", "/admin/pools", "/health"].map(async (p) => (await callWith(p, admin, TRACED)).text()),
    );
    for (const text of seen) expect(text).not.toContain(SECRET);
    // A malformed value: the gateway refuses to start tracing, and says which variable, not its value.
    const bad = await chat("sk-otel-malformed", {}, { ...TRACED, OTEL_EXPORTER_OTLP_HEADERS: `authorization Bearer ${SECRET}` });
    expect(bad.status).toBe(500);
    const text = await bad.text();
    expect(text).toContain("OTEL_EXPORTER_OTLP_HEADERS");
    expect(text).not.toContain(SECRET);
    expect(logs.join("\n")).not.toContain(SECRET);
  });

  it("the key's metrics carry gen_ai_client_token_usage and gen_ai_client_operation_duration_seconds", async () => {
    scripted((n) => (n === 3 ? json({ error: { message: "bad", type: "invalid_request_error" } }, 400) : json(USAGE)));
    let key = "";
    for (let i = 0; i < 3; i++) key = (await chat("sk-otel-metrics", {}, {})).headers.get("x-slotgate-key")!;
    const text = await (await callWith("/admin/metrics", { headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` } })).text();
    const samples = parseExposition(text)
      .flatMap((f) => f.samples)
      .filter((s) => s.labels.key_hash === key.split(":").pop());
    const one = (name: string, labels: Record<string, string>) => samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    const g = { gen_ai_operation_name: "chat", gen_ai_provider_name: "openai", gen_ai_request_model: "gpt-4o-mini" };
    expect(one("gen_ai_client_token_usage_sum", { ...g, gen_ai_token_type: "input" }).map((s) => s.value)).toEqual([42]);
    expect(one("gen_ai_client_token_usage_sum", { ...g, gen_ai_token_type: "output" }).map((s) => s.value)).toEqual([18]);
    expect(one("gen_ai_client_token_usage_count", { ...g, gen_ai_token_type: "input" }).map((s) => s.value)).toEqual([2]);
    const durations = one("gen_ai_client_operation_duration_seconds_count", g);
    expect(durations.find((s) => !s.labels.error_type)?.value).toBe(2);
    expect(durations.find((s) => s.labels.error_type === "400")?.value).toBe(1);
  });
});
