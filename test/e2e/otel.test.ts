// Traces end to end: `wrangler dev` with OTEL_EXPORTER_OTLP_ENDPOINT pointed at a loopback OTLP/HTTP
// receiver in this process, the official SDKs through the gateway to the stand-in with a caller's
// traceparent, and the spans that arrive decoded and checked against the GenAI conventions' names
// (the @opentelemetry/semantic-conventions constants) and the caller's trace.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { randomBytes } from "node:crypto";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from "@opentelemetry/semantic-conventions/incubating";
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS } from "@opentelemetry/semantic-conventions";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../support/gateway.ts";
import { decodeSpans, type Decoded } from "../support/otlp.ts";
import { ANTHROPIC_MODEL, anthropicVia, credential, OPENAI_MODEL, openaiVia, until, useStack } from "./setup.ts";

const SECRET = `otlp-e2e-secret-${randomBytes(4).toString("hex")}`;
const received: { path: string; headers: IncomingHttpHeaders; spans: Decoded[] }[] = [];
let receiver: Server;
let port = 0;

beforeAll(async () => {
  port = await freePort();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      // Decoded as it arrives: a payload a collector would refuse fails the test below.
      received.push({ path: req.url ?? "", headers: req.headers, spans: decodeSpans(JSON.parse(Buffer.concat(chunks).toString("utf8"))) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((ok) => receiver.listen(port, "127.0.0.1", ok));
});
afterAll(() => new Promise<void>((ok) => (receiver ? receiver.close(() => ok()) : ok())));

// Registered after the receiver's beforeAll: the gateway starts once the port is known.
const stack = useStack({
  standin: { rpm: 6_000, latencyMs: 20 },
  vars: () => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    // A secret in production (wrangler secret put); a --var here.
    OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${SECRET}`,
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_SERVICE_NAME: "slotgate-e2e",
  }),
});

const spansOf = (traceId: string) => received.flatMap((r) => r.spans).filter((s) => s.traceId === traceId);
const hex = (n: number) => randomBytes(n).toString("hex");

it("the openai SDK's request with a traceparent: the gateway's span is its child, in the GenAI conventions", async () => {
  const [traceId, parentId] = [hex(16), hex(8)];
  const key = credential("otel");
  const client = openaiVia(stack, key);
  const { data, response } = await client.chat.completions
    .create({ model: OPENAI_MODEL, messages: [{ role: "user", content: "trace me" }], max_tokens: 16 }, { headers: { traceparent: `00-${traceId}-${parentId}-01`, "x-slotgate-caller": "e2e" } })
    .withResponse();
  expect(data.choices[0]!.message.content).toBeTruthy();
  await until("the spans of the trace", () => spansOf(traceId).some((s) => s.kind === 2) && spansOf(traceId).some((s) => s.kind === 3));

  expect(received[0]!.path).toBe("/v1/traces");
  expect(received[0]!.headers["content-type"]).toBe("application/json");
  expect(received[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
  const spans = spansOf(traceId);
  const root = spans.find((s) => s.kind === 2)!;
  expect(root.parentSpanId).toBe(parentId);
  expect(root.resource["service.name"]).toBe("slotgate-e2e");
  expect(root.name).toBe(`chat ${OPENAI_MODEL}`);
  expect(root.attributes).toMatchObject({
    [ATTR_GEN_AI_OPERATION_NAME]: "chat",
    [ATTR_GEN_AI_PROVIDER_NAME]: GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
    [ATTR_GEN_AI_REQUEST_MODEL]: OPENAI_MODEL,
    [ATTR_GEN_AI_RESPONSE_MODEL]: data.model,
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: data.usage!.prompt_tokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: data.usage!.completion_tokens,
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200,
    "slotgate.attempts": 1,
    "slotgate.queue_ms": Number(response.headers.get("x-slotgate-queue-ms")),
    "slotgate.limiter.key": response.headers.get("x-slotgate-key"),
    "slotgate.caller": "e2e",
    "slotgate.lane": "normal",
  });
  expect(root.attributes[ATTR_ERROR_TYPE]).toBeUndefined();
  const attempt = spans.find((s) => s.kind === 3)!;
  expect(attempt.parentSpanId).toBe(root.spanId);
  expect(attempt.attributes).toMatchObject({ [ATTR_SERVER_ADDRESS]: "127.0.0.1", "slotgate.attempt": 1, [ATTR_HTTP_RESPONSE_STATUS_CODE]: 200 });
  // The attempt lies within the request it served.
  expect(BigInt(attempt.startTimeUnixNano) >= BigInt(root.startTimeUnixNano)).toBe(true);
  expect(BigInt(attempt.endTimeUnixNano) <= BigInt(root.endTimeUnixNano)).toBe(true);
  const all = JSON.stringify(received.map((r) => r.spans));
  expect(all).not.toContain(key);
  expect(all).not.toContain(SECRET);
});

it("a streamed Anthropic answer: its span ends with the stream, with the usage the stream reported", async () => {
  const [traceId, parentId] = [hex(16), hex(8)];
  const client = anthropicVia(stack, credential("otel-ant"));
  const stream = client.messages.stream({ model: ANTHROPIC_MODEL, max_tokens: 16, messages: [{ role: "user", content: "stream me" }] }, { headers: { traceparent: `00-${traceId}-${parentId}-01` } });
  const final = await stream.finalMessage();
  await until("the streamed request's span", () => spansOf(traceId).some((s) => s.kind === 2));
  const root = spansOf(traceId).find((s) => s.kind === 2)!;
  expect(root.parentSpanId).toBe(parentId);
  expect(root.attributes).toMatchObject({
    [ATTR_GEN_AI_OPERATION_NAME]: "chat",
    [ATTR_GEN_AI_PROVIDER_NAME]: GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
    [ATTR_GEN_AI_REQUEST_MODEL]: ANTHROPIC_MODEL,
    [ATTR_GEN_AI_RESPONSE_MODEL]: final.model,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: final.usage.output_tokens,
  });
});

it("the exporter's headers never reach wrangler's log", () => {
  expect(stack.gateway.output()).not.toContain(SECRET);
});
