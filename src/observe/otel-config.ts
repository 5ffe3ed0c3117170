// Traces' configuration: OpenTelemetry's own OTEL_* variables, read once per isolate's env
// (proxy/settings.ts). No endpoint: null, and the request path checks that and nothing else.
// OTEL_EXPORTER_OTLP_HEADERS is a secret: no message here ever quotes a value.
import { ConfigError } from "../config/error";
import type { Env } from "../env";

export type Val = string | number | boolean | string[];
export type Attrs = Record<string, Val>;

export interface TraceConfig {
  url: string;
  headers: Record<string, string>;
  /** The root sampler (always_on, always_off, traceidratio) and whether a caller's sampled flag decides instead. */
  root: string;
  parentBased: boolean;
  ratio: number;
  resource: Attrs;
  delayMs: number;
  batch: number;
  queue: number;
  timeoutMs: number;
}

const SAMPLERS = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `k=v,k2=v2` with percent-encoded parts (the OTel environment's format), or the error naming `name`. */
function pairs(raw: string | undefined, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of raw?.split(",") ?? []) {
    if (!p.trim()) continue;
    const i = p.indexOf("=");
    let k = "";
    let v = "";
    try {
      k = decodeURIComponent(p.slice(0, i).trim());
      v = decodeURIComponent(p.slice(i + 1).trim());
    } catch {}
    // Never the value in the message: OTEL_EXPORTER_OTLP_HEADERS holds a secret.
    if (i < 1 || !TOKEN.test(k) || /[\r\n\0]/.test(v)) throw new ConfigError(`${name} must be comma-separated key=value pairs (percent-encoded)`);
    out[k] = v;
  }
  return out;
}

function num(raw: string | undefined, name: string, dflt: number, min: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > 1e9) throw new ConfigError(`${name} must be an integer from ${min}`);
  return n;
}

/** The OTEL_* variables read and checked; null when tracing is off (no endpoint, or disabled). */
export function readTraceConfig(env: Env): TraceConfig | null {
  const e = env as unknown as Record<string, unknown>;
  const v = (n: string) => (typeof e[n] === "string" && (e[n] as string).trim() !== "" ? (e[n] as string).trim() : undefined);
  if (v("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return null;
  const exporter = v("OTEL_TRACES_EXPORTER") ?? "otlp";
  if (exporter === "none") return null;
  if (exporter !== "otlp") throw new ConfigError("OTEL_TRACES_EXPORTER must be otlp or none");
  const own = v("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = v("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (!own && !base) return null;
  const url = own ?? `${base!.replace(/\/$/, "")}/v1/traces`;
  if (!/^https?:\/\/[^/?#\s]/.test(url) || !URL.canParse(url)) throw new ConfigError(`${own ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"} must be an http or https URL`);
  const sampler = (v("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on").toLowerCase();
  if (!SAMPLERS.includes(sampler)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}`);
  const root = sampler.replace("parentbased_", "");
  const arg = root === "traceidratio" ? v("OTEL_TRACES_SAMPLER_ARG") : undefined;
  const ratio = arg === undefined ? 1 : Number(arg);
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1");
  const resource: Attrs = { "service.name": "slotgate", ...pairs(v("OTEL_RESOURCE_ATTRIBUTES"), "OTEL_RESOURCE_ATTRIBUTES") };
  if (v("OTEL_SERVICE_NAME")) resource["service.name"] = v("OTEL_SERVICE_NAME")!;
  const queue = num(v("OTEL_BSP_MAX_QUEUE_SIZE"), "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1);
  return {
    url,
    headers: { ...pairs(v("OTEL_EXPORTER_OTLP_HEADERS"), "OTEL_EXPORTER_OTLP_HEADERS"), ...pairs(v("OTEL_EXPORTER_OTLP_TRACES_HEADERS"), "OTEL_EXPORTER_OTLP_TRACES_HEADERS") },
    root,
    parentBased: sampler !== root,
    ratio,
    resource,
    delayMs: num(v("OTEL_BSP_SCHEDULE_DELAY"), "OTEL_BSP_SCHEDULE_DELAY", 5_000, 0),
    batch: Math.min(queue, num(v("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1)),
    queue,
    timeoutMs: num(v("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") ?? v("OTEL_EXPORTER_OTLP_TIMEOUT"), "OTEL_EXPORTER_OTLP_TIMEOUT", 10_000, 1),
  };
}
