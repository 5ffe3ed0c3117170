// Reads an OTLP/HTTP JSON traces request (ExportTraceServiceRequest, the proto3 JSON mapping with
// OTLP's exceptions: hex ids, enums as numbers, 64-bit integers as strings) the way a collector
// would, and throws on anything it would refuse, so the tests' checks stand on a real decoding.
// Used by the workerd tests and the end-to-end test alike (no runtime-specific imports).

export interface Decoded {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  flags: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
  scope: string;
}

const fail = (what: string): never => {
  throw new Error(`not OTLP JSON: ${what}`);
};

/** One AnyValue: exactly one of its fields. */
function anyValue(v: unknown): unknown {
  if (typeof v !== "object" || v === null) return fail(`value ${JSON.stringify(v)}`);
  const entries = Object.entries(v);
  if (entries.length !== 1) return fail(`AnyValue with ${entries.length} fields`);
  const [k, x] = entries[0]!;
  switch (k) {
    case "stringValue":
      return typeof x === "string" ? x : fail("stringValue");
    case "boolValue":
      return typeof x === "boolean" ? x : fail("boolValue");
    case "intValue":
      return typeof x === "string" && /^-?\d+$/.test(x) ? Number(x) : fail(`intValue ${JSON.stringify(x)}`);
    case "doubleValue":
      return typeof x === "number" ? x : fail("doubleValue");
    case "arrayValue":
      return Array.isArray((x as { values?: unknown }).values) ? (x as { values: unknown[] }).values.map(anyValue) : fail("arrayValue");
    default:
      return fail(`AnyValue field ${k}`);
  }
}

function attributes(list: unknown): Record<string, unknown> {
  if (list === undefined) return {};
  if (!Array.isArray(list)) return fail("attributes");
  const out: Record<string, unknown> = {};
  for (const a of list) {
    if (typeof a?.key !== "string" || a.key === "") fail("attribute key");
    if (a.key in out) fail(`attribute ${a.key} twice`);
    out[a.key] = anyValue(a.value);
  }
  return out;
}

const hex = (v: unknown, n: number, what: string) => (typeof v === "string" && new RegExp(`^[0-9a-f]{${n}}$`).test(v) && !/^0+$/.test(v) ? v : fail(`${what} ${JSON.stringify(v)}`));
const nanos = (v: unknown, what: string) => (typeof v === "string" && /^\d{19}$/.test(v) ? v : fail(`${what} ${JSON.stringify(v)}`));

/** Every span in one request body, with its resource's and scope's names beside it. */
export function decodeSpans(body: unknown): Decoded[] {
  const rs = (body as { resourceSpans?: unknown }).resourceSpans;
  if (!Array.isArray(rs)) return fail("resourceSpans");
  const out: Decoded[] = [];
  for (const r of rs) {
    const resource = attributes(r.resource?.attributes);
    if (!Array.isArray(r.scopeSpans)) fail("scopeSpans");
    for (const ss of r.scopeSpans) {
      if (typeof ss.scope?.name !== "string") fail("scope name");
      for (const s of ss.spans ?? fail("spans")) {
        const start = nanos(s.startTimeUnixNano, "startTimeUnixNano");
        const end = nanos(s.endTimeUnixNano, "endTimeUnixNano");
        if (BigInt(end) < BigInt(start)) fail("a span that ends before it starts");
        if (![0, 1, 2, 3, 4, 5].includes(s.kind)) fail(`kind ${s.kind}`);
        if (typeof s.name !== "string" || !s.name) fail("name");
        if (s.status?.code !== undefined && ![0, 1, 2].includes(s.status.code)) fail("status code");
        out.push({
          traceId: hex(s.traceId, 32, "traceId"),
          spanId: hex(s.spanId, 16, "spanId"),
          ...(s.parentSpanId !== undefined && { parentSpanId: hex(s.parentSpanId, 16, "parentSpanId") }),
          ...(s.traceState !== undefined && { traceState: s.traceState }),
          name: s.name,
          kind: s.kind,
          flags: s.flags ?? 0,
          startTimeUnixNano: start,
          endTimeUnixNano: end,
          attributes: attributes(s.attributes),
          status: s.status ?? {},
          resource,
          scope: ss.scope.name,
        });
      }
    }
  }
  return out;
}
