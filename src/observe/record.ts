// What an ended span carries to the exporter: the record export.ts buffers and encodes, and the
// trace it belongs to. The spans (spans.ts) make them; neither file needs the other's.
import type { Attrs, TraceConfig } from "./otel-config";
import type { Parent } from "./traceparent";

/** One request's trace: its id, its caller's context, the config and the request's waitUntil. */
export interface Trace {
  id: string;
  parent: Parent | null;
  config: TraceConfig;
  waitUntil: (p: Promise<unknown>) => void;
}

/** One span, recorded: what is needed to send it. `kind`: OTLP's (2 server, 3 client). */
export interface SpanRecord {
  readonly id: string;
  readonly trace: Trace;
  readonly name: string;
  readonly kind: number;
  readonly parent: string | undefined;
  readonly start: number;
  readonly end: number;
  readonly attrs: Attrs;
}
