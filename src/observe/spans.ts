// The request path's spans in the OpenTelemetry GenAI semantic conventions. A request's span
// (SERVER, the child of a caller's W3C `traceparent`) has a CLIENT child per upstream attempt; an
// ended span waits in this isolate's buffer (export.ts). Times are Date.now() around awaits: a
// Worker's clock stands still while it computes.
import type { Who } from "../proxy/caller";
import type { Target } from "../proxy/target";
import type { UsageRecord } from "../usage/types";
import { buffer } from "./export";
import { type AnswerFacts, providerName } from "./genai";
import type { Attrs, TraceConfig, Val } from "./otel-config";
import type { SpanRecord, Trace } from "./record";
import { parentOf, sampled } from "./traceparent";

const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

/** One span, as the request path records it; ended, it is a SpanRecord for the exporter. */
export class Span implements SpanRecord {
  readonly id = hex(8);
  readonly attrs: Attrs;
  end = 0;
  constructor(
    readonly trace: Trace,
    public name: string,
    readonly kind: number,
    readonly parent: string | undefined,
    readonly start: number,
    attrs: Attrs,
  ) {
    this.attrs = attrs;
  }

  set(k: string, v: Val | null | undefined): void {
    if (v !== undefined && v !== null && v !== "") this.attrs[k] = v;
  }

  /** Ends it (once), with its error if any; it then waits in the isolate's buffer. */
  close(at: number, error?: string | null): void {
    if (this.end) return;
    this.set("error.type", error);
    this.end = Math.max(at, this.start);
    buffer(this);
  }
}

/** An upstream attempt's span: asked at its key's limiter, then (granted) sent and answered. */
export class AttemptSpan extends Span {
  /** The slot was granted: its number among the request's attempts, and the wait for it. */
  granted(n: number, at: number): void {
    this.set("slotgate.attempt", n);
    this.set("slotgate.queue_ms", at - this.start);
  }

  /** The provider answered `status` (0: nothing came); a status of 400 and up, or `error`, is its error. */
  answered(at: number, status: number, error?: string): void {
    this.set("http.response.status_code", status || null);
    this.close(at, error ?? (status >= 400 ? String(status) : null));
  }
}

/** The gateway's span of one caller request (SERVER): GenAI attributes plus the gateway's `slotgate.*` facts. */
export class RequestSpan extends Span {
  /** Filled by the meter from the answer (model, id, finish reasons). */
  readonly facts: AnswerFacts = {};
  /** The answer's record was final before it went back: a plain answer, read whole. */
  private metered = false;
  private genai: Attrs;

  constructor(t: Trace, name: string, start: number, genai: Attrs) {
    super(t, name, 2, t.parent?.spanId, start, { ...genai });
    this.genai = genai;
  }

  /** What the request is once its body was read: the model it names, its key and who asks. */
  described(model: string, key: string, who: Who, pool?: { pool: string; vk: string } | null): void {
    const op = this.genai["gen_ai.operation.name"];
    if (model !== "*") {
      this.genai["gen_ai.request.model"] = model;
      this.set("gen_ai.request.model", model);
      // `{gen_ai.operation.name} {gen_ai.request.model}`, as the conventions name a GenAI span.
      if (op) this.name = `${op} ${model}`;
    }
    this.set("slotgate.limiter.key", key);
    this.set("slotgate.caller", who.caller);
    this.set("slotgate.lane", who.priority ?? "normal");
    this.set("slotgate.pool", pool?.pool);
    this.set("slotgate.virtual_key", pool?.vk);
  }

  /** A new attempt's span, started when it asks its key's limiter; the request goes upstream as its child. */
  attempt(at: Target, now: number, member?: string): AttemptSpan {
    const url = at.url;
    const s = new AttemptSpan(this.trace, this.name, 3, this.id, now, {
      ...this.genai,
      "server.address": url.hostname,
      "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80),
      "slotgate.limiter.key": at.key.key,
    });
    s.set("slotgate.pool.member", member);
    this.set("slotgate.pool.member", member);
    at.headers.set("traceparent", `00-${this.trace.id}-${s.id}-01`);
    return s;
  }

  /** The answer's usage, once it is final (a stream's at its end). */
  usage(r: UsageRecord): void {
    this.metered = true;
    const t = r.tokens;
    if (!t) return;
    this.set("gen_ai.usage.input_tokens", t.input);
    this.set("gen_ai.usage.output_tokens", t.output);
    if (t.cached) this.set("gen_ai.usage.cache_read.input_tokens", t.cached);
    if (t.cacheWrite) this.set("gen_ai.usage.cache_creation.input_tokens", t.cacheWrite);
  }

  /**
   * The caller's answer: its status and the gateway's headers as attributes. The span ends now when
   * the body is in memory, else when it has gone out (a stream at its end) or the caller left.
   */
  answer(res: Response, waitUntil: (p: Promise<unknown>) => void): Response {
    const h = res.headers;
    const end = (error: string | null) => {
      const f = this.facts;
      this.set("gen_ai.response.model", f.model);
      this.set("gen_ai.response.id", f.id);
      this.set("gen_ai.response.finish_reasons", f.finish);
      this.close(Date.now(), error);
    };
    this.set("http.response.status_code", res.status);
    for (const name of ["attempts", "queue-ms"]) if (h.has(`x-slotgate-${name}`)) this.set(`slotgate.${name.replace("-", "_")}`, Number(h.get(`x-slotgate-${name}`)));
    this.set("slotgate.cache", h.get("x-slotgate-cache"));
    const error = res.status === 499 ? "caller_left" : (h.get("x-slotgate-error") ?? (res.status >= 400 ? String(res.status) : null));
    // A body already in memory (a plain answer metered whole, an error read capped) ends it now.
    if (!res.body || this.metered || res.status >= 400) {
      end(error);
      return res;
    }
    // A stream (or a stored answer) through an identity stream (native, as streamBack's): the span ends as it does.
    const { readable, writable } = new TransformStream();
    waitUntil(res.body.pipeTo(writable).then(() => end(error), () => end(error ?? "interrupted")));
    return new Response(readable, res);
  }
}

/**
 * The span of a request, or null when the sampler drops it. `op`: its `gen_ai.operation.name`
 * (null: not a GenAI operation, named `{method} /{provider}/*` as an HTTP server span).
 */
export function requestSpan(config: TraceConfig, headers: Headers, start: number, provider: string, method: string, op: string | null, waitUntil: (p: Promise<unknown>) => void): RequestSpan | null {
  const parent = parentOf(headers);
  const id = parent?.traceId ?? hex(16);
  if (!sampled(config, parent, id)) return null;
  const genai: Attrs = { "gen_ai.provider.name": providerName(provider), "http.request.method": method };
  if (op) genai["gen_ai.operation.name"] = op;
  return new RequestSpan({ id, parent, config, waitUntil }, op ?? `${method} /${provider}/*`, start, genai);
}
