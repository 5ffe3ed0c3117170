// The pure parts of tracing: the OTEL_* variables, the W3C traceparent, the sampler, and the spans
// as they are encoded for OTLP/HTTP JSON (read back and checked against the conventions' names).
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
  GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT,
  GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI,
  GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
  GEN_AI_PROVIDER_NAME_VALUE_X_AI,
} from "@opentelemetry/semantic-conventions/incubating";
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS } from "@opentelemetry/semantic-conventions";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/config/error";
import type { Env } from "../../src/env";
import type { LimiterCalls } from "../../src/proxy/limiter-client";
import type { Target } from "../../src/proxy/target";
import { encode } from "../../src/observe/export";
import { noteAnswer, operationOf, providerName } from "../../src/observe/genai";
import { readTraceConfig, type TraceConfig } from "../../src/observe/otel-config";
import { requestSpan, type Span } from "../../src/observe/spans";
import { parentOf, sampled } from "../../src/observe/traceparent";
import { decodeSpans, type Decoded } from "../support/otlp";

afterEach(() => vi.restoreAllMocks());

const ENDPOINT = "http://collector.test:4318";
const config = (vars: Record<string, string> = {}) => readTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, ...vars } as unknown as Env);
const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("OTEL_* configuration", () => {
  it("is off (null) with no endpoint, when disabled, or with the exporter none", () => {
    expect(readTraceConfig({} as Env)).toBeNull();
    expect(readTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " } as Env)).toBeNull();
    expect(config({ OTEL_SDK_DISABLED: "true" })).toBeNull();
    expect(config({ OTEL_TRACES_EXPORTER: "none" })).toBeNull();
    expect(config()).not.toBeNull();
  });

  it("sends to the endpoint's /v1/traces, or to the traces endpoint as given", () => {
    expect(config()!.url).toBe(`${ENDPOINT}/v1/traces`);
    expect(config({ OTEL_EXPORTER_OTLP_ENDPOINT: `${ENDPOINT}/otlp/` })!.url).toBe(`${ENDPOINT}/otlp/v1/traces`);
    expect(config({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://x.test/custom" })!.url).toBe("https://x.test/custom");
    expect(readTraceConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://x.test/t" } as Env)!.url).toBe("https://x.test/t");
    expect(() => config({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(ConfigError);
  });

  it("reads the headers (percent-encoded pairs), the traces' own over the shared, and never quotes them in an error", () => {
    const c = config({ OTEL_EXPORTER_OTLP_HEADERS: "api-key=s3cr%3Dt,x-team = evals", OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-team=traces" })!;
    expect(c.headers).toEqual({ "api-key": "s3cr=t", "x-team": "traces" });
    const secret = "Bearer topsecret-7f3a";
    let message = "";
    try {
      config({ OTEL_EXPORTER_OTLP_HEADERS: `authorization ${secret}` });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/OTEL_EXPORTER_OTLP_HEADERS/);
    expect(message).not.toContain("topsecret");
  });

  it("reads the sampler and its argument, the service name and resource attributes, and the batch settings", () => {
    expect(config()).toMatchObject({ root: "always_on", parentBased: true, ratio: 1, resource: { "service.name": "slotgate" }, delayMs: 5_000, batch: 512 });
    expect(config({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" })).toMatchObject({ root: "traceidratio", parentBased: false, ratio: 0.25 });
    expect(config({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })).toMatchObject({ root: "always_off", parentBased: true });
    expect(config({ OTEL_SERVICE_NAME: "gw", OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod,service.name=x" })!.resource).toEqual({ "service.name": "gw", "deployment.environment.name": "prod" });
    expect(config({ OTEL_BSP_MAX_QUEUE_SIZE: "100", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "512" })).toMatchObject({ queue: 100, batch: 100 });
    expect(() => config({ OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(/OTEL_TRACES_SAMPLER must be one of/);
    expect(() => config({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() => config({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => config({ OTEL_BSP_SCHEDULE_DELAY: "soon" })).toThrow(/OTEL_BSP_SCHEDULE_DELAY/);
  });
});

describe("traceparent", () => {
  const h = (traceparent: string, tracestate?: string) => new Headers({ traceparent, ...(tracestate && { tracestate }) });

  it("reads a valid one, with its sampled flag and tracestate", () => {
    expect(parentOf(h(PARENT, "congo=t61rcWkgMzE"))).toEqual({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", sampled: true, state: "congo=t61rcWkgMzE" });
    expect(parentOf(h("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"))!.sampled).toBe(false);
    // A later version is read as 00, its extra fields ignored.
    expect(parentOf(h("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future")))!.toMatchObject({ spanId: "b7ad6b7169203331" });
  });

  it("ignores an invalid one", () => {
    for (const bad of [
      "",
      "garbage",
      "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01", // upper case
      "00-00000000000000000000000000000000-b7ad6b7169203331-01", // zero trace id
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", // zero span id
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", // version ff
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra", // version 00 has 4 fields
      "00-0af7651916cd43dd8448eb211c8031-b7ad6b7169203331-01", // short trace id
    ])
      expect(parentOf(h(bad)), bad).toBeNull();
    expect(parentOf(new Headers())).toBeNull();
  });
});

describe("sampler", () => {
  const parent = (s: boolean) => ({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", sampled: s });
  const id = (low: number) => `${"0".repeat(18)}${low.toString(16).padStart(14, "0")}`;

  it("always_on and always_off; parent-based follows the caller's flag", () => {
    expect(sampled(config({ OTEL_TRACES_SAMPLER: "always_on" })!, parent(false), id(1))).toBe(true);
    expect(sampled(config({ OTEL_TRACES_SAMPLER: "always_off" })!, parent(true), id(1))).toBe(false);
    expect(sampled(config()!, parent(false), id(1))).toBe(false);
    expect(sampled(config()!, parent(true), id(1))).toBe(true);
    expect(sampled(config({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })!, null, id(1))).toBe(false);
    expect(sampled(config({ OTEL_TRACES_SAMPLER: "parentbased_always_off" })!, parent(true), id(1))).toBe(true);
  });

  it("traceidratio keeps the trace ids whose randomness is past the ratio's threshold", () => {
    const c = (arg: string) => config({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: arg })!;
    expect(sampled(c("0"), null, id(2 ** 56 - 1))).toBe(false);
    expect(sampled(c("1"), null, id(0))).toBe(true);
    // An even spread of ids: about the ratio of them sampled.
    const ids = Array.from({ length: 1000 }, (_, i) => id(Math.floor(((i + 0.5) / 1000) * 2 ** 56)));
    expect(ids.filter((t) => sampled(c("0.25"), null, t)).length).toBe(250);
    expect(ids.filter((t) => sampled(c("0.9"), null, t)).length).toBe(900);
  });
});

describe("GenAI names", () => {
  it("operations and providers as the conventions name them", () => {
    expect(operationOf("POST", "/v1/chat/completions")).toBe(GEN_AI_OPERATION_NAME_VALUE_CHAT);
    expect(operationOf("POST", "/v1/messages")).toBe(GEN_AI_OPERATION_NAME_VALUE_CHAT);
    expect(operationOf("POST", "/v1/embeddings")).toBe(GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS);
    expect(operationOf("POST", "/v1beta/models/gemini-2.0-flash:streamGenerateContent")).toBe(GEN_AI_OPERATION_NAME_VALUE_GENERATE_CONTENT);
    expect(operationOf("GET", "/v1/models")).toBeNull();
    expect(providerName("openai")).toBe(GEN_AI_PROVIDER_NAME_VALUE_OPENAI);
    expect(providerName("gemini")).toBe(GEN_AI_PROVIDER_NAME_VALUE_GCP_GEMINI);
    expect(providerName("azure")).toBe(GEN_AI_PROVIDER_NAME_VALUE_AZURE_AI_OPENAI);
    expect(providerName("mistral")).toBe(GEN_AI_PROVIDER_NAME_VALUE_MISTRAL_AI);
    expect(providerName("xai")).toBe(GEN_AI_PROVIDER_NAME_VALUE_X_AI);
  });

  it("reads an answer's model, id and finish reasons from OpenAI, Anthropic and Gemini shapes", () => {
    const f = {};
    noteAnswer(f, { type: "message_start", message: { id: "msg_1", model: "claude-haiku-4-5" } });
    noteAnswer(f, { type: "message_delta", delta: { stop_reason: "end_turn" } });
    expect(f).toEqual({ model: "claude-haiku-4-5", id: "msg_1", finish: ["end_turn"] });
    const g = {};
    noteAnswer(g, { modelVersion: "gemini-2.0-flash-001", responseId: "r1", candidates: [{ finishReason: "STOP" }] });
    expect(g).toEqual({ model: "gemini-2.0-flash-001", id: "r1", finish: ["STOP"] });
  });
});

describe("spans, as encoded for OTLP/HTTP JSON", () => {
  const target = (): Target => ({
    url: new URL("https://api.openai.com/v1/chat/completions"),
    headers: new Headers({ authorization: "Bearer sk-never-in-a-span" }),
    key: { key: "openai:gpt-4o-mini:0123456789abcdef", provider: "openai", model: "gpt-4o-mini" },
    limiter: {} as LimiterCalls,
  });

  /** A traced request through its stages by hand; what it exported, decoded. */
  async function traced(c: TraceConfig, headers: Headers, answer: Response): Promise<{ spans: Decoded[]; upstream: Target; posts: Request[] }> {
    const posts: Request[] = [];
    const bodies: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input as RequestInfo, init as RequestInit);
      posts.push(req);
      bodies.push(await req.text());
      return new Response("{}");
    });
    const pending: Promise<unknown>[] = [];
    const waitUntil = (p: Promise<unknown>) => void pending.push(p);
    const t0 = Date.now();
    const span = requestSpan(c, headers, t0, "openai", "POST", "chat", waitUntil)!;
    span.described("gpt-4o-mini", "openai:gpt-4o-mini:0123456789abcdef", { caller: "evals", priority: "high" }, { pool: "duo", vk: "ci-evals" });
    const upstream = target();
    const first = span.attempt(upstream, t0 + 1, "org-a");
    first.granted(1, t0 + 5);
    first.answered(t0 + 20, 429);
    const second = span.attempt(upstream, t0 + 30, "org-b");
    second.granted(2, t0 + 31);
    second.answered(t0 + 60, 200);
    span.usage({ model: "gpt-4o-mini", tokens: { input: 11, output: 7, cached: 0, cacheWrite: 0 }, costUsd: null });
    noteAnswer(span.facts, { id: "chatcmpl-1", model: "gpt-4o-mini-2024-07-18", choices: [{ finish_reason: "stop" }] });
    const res = span.answer(answer, waitUntil);
    await res.text();
    while (pending.length) await pending.shift();
    return { spans: bodies.flatMap((b) => decodeSpans(JSON.parse(b))), upstream, posts };
  }

  const ok = () => new Response("{}", { status: 200, headers: { "x-slotgate-attempts": "2", "x-slotgate-queue-ms": "6", "x-slotgate-cache": "miss" } });

  it("a request span (SERVER) with the GenAI attributes and the gateway's facts, a CLIENT child per attempt", async () => {
    const c = config({ OTEL_BSP_SCHEDULE_DELAY: "0", OTEL_EXPORTER_OTLP_HEADERS: "api-key=otlp-secret-1" })!;
    const { spans, upstream, posts } = await traced(c, new Headers(), ok());
    expect(posts[0]!.url).toBe(`${ENDPOINT}/v1/traces`);
    expect(posts[0]!.headers.get("content-type")).toBe("application/json");
    expect(posts[0]!.headers.get("api-key")).toBe("otlp-secret-1");
    const root = spans.find((s) => s.kind === 2)!;
    const attempts = spans.filter((s) => s.kind === 3);
    expect(root.name).toBe("chat gpt-4o-mini");
    expect(root.parentSpanId).toBeUndefined();
    expect(root.attributes).toMatchObject({
      [ATTR_GEN_AI_OPERATION_NAME]: "chat",
      [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
      [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4o-mini",
      [ATTR_GEN_AI_RESPONSE_MODEL]: "gpt-4o-mini-2024-07-18",
      [ATTR_GEN_AI_RESPONSE_ID]: "chatcmpl-1",
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ["stop"],
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: 11,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: 7,
      [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
      "slotgate.attempts": 2,
      "slotgate.queue_ms": 6,
      "slotgate.cache": "miss",
      "slotgate.limiter.key": "openai:gpt-4o-mini:0123456789abcdef",
      "slotgate.caller": "evals",
      "slotgate.lane": "high",
      "slotgate.pool": "duo",
      "slotgate.pool.member": "org-b",
    });
    expect(root.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    expect(root.status).toEqual({});
    expect(attempts).toHaveLength(2);
    for (const a of attempts) {
      expect(a.traceId).toBe(root.traceId);
      expect(a.parentSpanId).toBe(root.spanId);
      expect(a.attributes).toMatchObject({ [ATTR_SERVER_ADDRESS]: "api.openai.com", "server.port": 443, [ATTR_GEN_AI_REQUEST_MODEL]: "gpt-4o-mini" });
    }
    const [first, second] = attempts.sort((a, b) => Number(a.attributes["slotgate.attempt"]) - Number(b.attributes["slotgate.attempt"]));
    expect(first!.attributes).toMatchObject({ [ATTR_ERROR_TYPE]: "429", [ATTR_HTTP_RESPONSE_STATUS_CODE]: 429, "slotgate.queue_ms": 4, "slotgate.pool.member": "org-a" });
    expect(first!.status).toEqual({ code: 2 });
    expect(second!.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
    expect(BigInt(second!.endTimeUnixNano) - BigInt(second!.startTimeUnixNano)).toBe(30_000_000n);
    // The provider hears the trace too: the last attempt's span as its parent.
    expect(upstream.headers.get("traceparent")).toBe(`00-${root.traceId}-${second!.spanId}-01`);
    // Nothing secret: not the provider's credential, not the exporter's headers.
    const all = JSON.stringify(spans);
    expect(all).not.toContain("sk-never-in-a-span");
    expect(all).not.toContain("otlp-secret-1");
  });

  it("a caller's traceparent makes the request span its child, in its trace, with its tracestate", async () => {
    const { spans } = await traced(config({ OTEL_BSP_SCHEDULE_DELAY: "0" })!, new Headers({ traceparent: PARENT, tracestate: "vendor=1" }), ok());
    const root = spans.find((s) => s.kind === 2)!;
    expect(root.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(root.parentSpanId).toBe("b7ad6b7169203331");
    expect(root.traceState).toBe("vendor=1");
    expect(root.flags & 0x300).toBe(0x300); // the parent is remote
  });

  it("a failed answer is the span's error.type: the gateway's own error code, else the status", async () => {
    const gw = new Response("{}", { status: 504, headers: { "x-slotgate-error": "deadline_exceeded" } });
    const { spans } = await traced(config({ OTEL_BSP_SCHEDULE_DELAY: "0" })!, new Headers(), gw);
    const root = spans.find((s) => s.kind === 2)!;
    expect(root.attributes[ATTR_ERROR_TYPE]).toBe("deadline_exceeded");
    expect(root.status).toEqual({ code: 2 });
  });

  it("the sampler's no makes no span, and nothing is sent", async () => {
    const spy = vi.spyOn(globalThis, "fetch");
    const none = requestSpan(config({ OTEL_TRACES_SAMPLER: "always_off" })!, new Headers(), Date.now(), "openai", "POST", "chat", () => {});
    expect(none).toBeNull();
    // Parent-based: a caller that did not sample its trace is not sampled here either.
    expect(requestSpan(config()!, new Headers({ traceparent: PARENT.replace(/01$/, "00") }), Date.now(), "openai", "POST", "chat", () => {})).toBeNull();
    expect(spy).not.toHaveBeenCalled();
  });

  it("encodes ids in hex, times in nanoseconds as strings and values as OTLP AnyValues", () => {
    const c = config()!;
    const s = { trace: { id: "a".repeat(32), parent: null, config: c, waitUntil: () => {} }, id: "b".repeat(16), name: "x", kind: 2, parent: undefined, start: 1_700_000_000_123, end: 1_700_000_000_456, attrs: { s: "v", i: 3, d: 0.5, b: true, a: ["x", "y"] } } as unknown as Span;
    const body = JSON.parse(encode(c, [s]));
    const out = body.resourceSpans[0].scopeSpans[0].spans[0];
    expect(body.resourceSpans[0].resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "slotgate" } });
    expect(out).toMatchObject({ traceId: "a".repeat(32), spanId: "b".repeat(16), startTimeUnixNano: "1700000000123000000", endTimeUnixNano: "1700000000456000000" });
    expect(out.attributes).toEqual([
      { key: "s", value: { stringValue: "v" } },
      { key: "i", value: { intValue: "3" } },
      { key: "d", value: { doubleValue: 0.5 } },
      { key: "b", value: { boolValue: true } },
      { key: "a", value: { arrayValue: { values: [{ stringValue: "x" }, { stringValue: "y" }] } } },
    ]);
  });
});
