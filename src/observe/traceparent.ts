// W3C Trace Context in: a caller's `traceparent` (and `tracestate`) makes the gateway's span its
// child; an invalid one is ignored. And the sampler's decision for a new span (OTEL_TRACES_SAMPLER).
import type { TraceConfig } from "./otel-config";

/** A caller's W3C trace context: `traceparent` (version 00, or a later one read as 00) and `tracestate`. */
export interface Parent {
  traceId: string;
  spanId: string;
  sampled: boolean;
  state?: string;
}

export function parentOf(h: Headers): Parent | null {
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/.exec(h.get("traceparent")?.trim() ?? "");
  if (!m || m[1] === "ff" || (m[1] === "00" && m[5]) || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return null;
  const state = h.get("tracestate")?.trim();
  return { traceId: m[2]!, spanId: m[3]!, sampled: (Number.parseInt(m[4]!, 16) & 1) === 1, ...(state && state.length <= 512 && /^[\x20-\x7e]+$/.test(state) && { state }) };
}

/** The sampler's decision for a new span of `traceId`: a caller's flag where parent-based, else the root sampler. */
export function sampled(c: TraceConfig, parent: Parent | null, traceId: string): boolean {
  if (parent && c.parentBased) return parent.sampled;
  if (c.root === "traceidratio")
    // The trace id's last 56 bits as its randomness (W3C Trace Context level 2), against the ratio's threshold.
    return c.ratio > 0 && Number.parseInt(traceId.slice(18), 16) >= (1 - c.ratio) * 2 ** 56;
  return c.root === "always_on";
}
