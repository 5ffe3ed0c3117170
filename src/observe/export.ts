// Spans out as OTLP/HTTP JSON to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or OTEL_EXPORTER_OTLP_ENDPOINT
// + /v1/traces), in batches from this isolate's buffer, each from a request's waitUntil after its
// answer: never on a request's path.
import type { Attrs, TraceConfig, Val } from "./otel-config";
import type { SpanRecord } from "./record";

// The isolate's buffer: spans of every request it serves, sent in batches. A batch leaves from the
// waitUntil of the request whose span filled it or started the wait, never on a request's path.
const spans: SpanRecord[] = [];
/** When the flush being waited for is due (0: none); one a runtime cut short is given up 30 s on. */
let due = 0;
/** Spans the full buffer turned away since the last warning. */
let full = 0;

export function buffer(s: SpanRecord): void {
  const { config: c, waitUntil } = s.trace;
  if (spans.length >= c.queue) {
    full++;
    return;
  }
  spans.push(s);
  const now = Date.now();
  if (spans.length >= c.batch) waitUntil(flush(c));
  else if (!due || now > due + 30_000) {
    due = now + c.delayMs;
    waitUntil(
      new Promise((r) => setTimeout(r, c.delayMs)).then(() => {
        due = 0;
        return flush(c);
      }),
    );
  }
}

/** Sends what the buffer holds, a batch at a time; a batch the receiver refuses is dropped, with a warning. */
export async function flush(c: TraceConfig): Promise<void> {
  if (full) console.warn(`slotgate: ${full} spans not exported: the buffer (OTEL_BSP_MAX_QUEUE_SIZE) was full`);
  full = 0;
  while (spans.length) {
    const batch = spans.splice(0, c.batch);
    try {
      const res = await fetch(c.url, { method: "POST", headers: { ...c.headers, "content-type": "application/json" }, body: encode(c, batch), signal: AbortSignal.timeout(c.timeoutMs) });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`status ${res.status}`);
    } catch (err) {
      // The reason only: never the endpoint's headers (OTEL_EXPORTER_OTLP_HEADERS is a secret).
      console.warn(`slotgate: ${batch.length} spans not exported: ${err instanceof Error ? err.message : "error"}`);
    }
  }
}

const any = (v: Val): unknown =>
  typeof v === "string"
    ? { stringValue: v }
    : typeof v === "boolean"
      ? { boolValue: v }
      : Array.isArray(v)
        ? { arrayValue: { values: v.map(any) } }
        : Number.isInteger(v)
          ? { intValue: String(v) }
          : { doubleValue: v };
const kv = (a: Attrs) => Object.entries(a).map(([key, v]) => ({ key, value: any(v) }));
const nanos = (ms: number) => `${Math.round(ms)}000000`;

/**
 * OTLP/HTTP JSON (the proto3 JSON mapping with OTLP's exceptions: ids in hex, enums as numbers):
 * one resource, one scope, the spans. `flags`: the W3C trace flags (sampled) and whether the
 * parent is remote (bits 8 and 9).
 */
export function encode(c: TraceConfig, batch: readonly SpanRecord[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: kv(c.resource) },
        scopeSpans: [
          {
            scope: { name: "slotgate" },
            spans: batch.map((s) => ({
              traceId: s.trace.id,
              spanId: s.id,
              ...(s.parent && { parentSpanId: s.parent }),
              ...(s.trace.parent?.state && { traceState: s.trace.parent.state }),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: nanos(s.start),
              endTimeUnixNano: nanos(s.end),
              attributes: kv(s.attrs),
              status: s.attrs["error.type"] ? { code: 2 } : {},
              flags: 0x101 | (s.kind === 2 && s.parent ? 0x200 : 0),
            })),
          },
        ],
      },
    ],
  });
}
