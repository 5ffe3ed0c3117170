/**
 * @module A request of one family served by a member of another in the same wire shape (flavour.ts
 * `Wire`): Claude through Anthropic's Messages API answered by Bedrock's InvokeModel or Vertex's
 * rawPredict, whose bodies differ only by `anthropic_version`, where the model and a stream are
 * named, and where betas go (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html;
 * cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude). Bedrock frames a streamed
 * answer in event-stream messages whose chunks each hold one of Anthropic's events (base64): given
 * back as the server-sent events the caller's SDK reads.
 */
import { EventStreamError, FrameReader } from "../usage/eventstream";
import type { Wire } from "../providers/flavour";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const enc = new TextEncoder();
const dec = new TextDecoder();

/** The member's body for the caller's (`json`, the request's one parse); null when it is not a JSON object. */
export function wireBody(wire: Wire, json: unknown, headers: Headers): Uint8Array | null {
  if (!isObj(json)) return null;
  const out: Obj = { ...json };
  for (const k of wire.drop) delete out[k];
  Object.assign(out, wire.set);
  for (const [header, field] of Object.entries(wire.headersToBody ?? {})) {
    const v = headers.get(header);
    if (v) out[field] = v.split(",").map((s) => s.trim()).filter(Boolean);
  }
  return enc.encode(JSON.stringify(out));
}

/** One of Anthropic's events as a server-sent event: `event: <type>` and its JSON. */
const sse = (json: string, type: string) => enc.encode(`event: ${type}\ndata: ${json}\n\n`);

/**
 * Bedrock's `chunk` messages as server-sent events, as they come; an exception message (a
 * throttling or a model's error mid-stream) as Anthropic's `error` event. Frames that cannot be
 * read cut the stream with an error, never a clean end: a truncated answer must not look whole.
 */
export function wireStream(res: Response): Response {
  if (!res.body) return res;
  const reader = new FrameReader();
  const body = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        let frames;
        try {
          frames = reader.push(chunk);
        } catch (err) {
          if (err instanceof EventStreamError) return out.error(err);
          throw err;
        }
        for (const m of frames) {
          const payload = dec.decode(m.payload);
          if (m.headers[":message-type"] === "exception") {
            const type = String(m.headers[":exception-type"] ?? "api_error");
            const message = (() => {
              try {
                const p: unknown = JSON.parse(payload);
                return isObj(p) && typeof p.message === "string" ? p.message : "";
              } catch {
                return "";
              }
            })();
            out.enqueue(sse(JSON.stringify({ type: "error", error: { type: type === "throttlingException" ? "rate_limit_error" : "api_error", message } }), "error"));
            continue;
          }
          if (m.headers[":event-type"] !== "chunk") continue;
          let event: string;
          try {
            const p: unknown = JSON.parse(payload);
            const bytes = isObj(p) ? p.bytes : undefined;
            event = typeof bytes === "string" ? dec.decode(Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))) : "";
          } catch {
            continue;
          }
          let type = "message";
          try {
            const e: unknown = JSON.parse(event);
            if (isObj(e) && typeof e.type === "string") type = e.type;
          } catch {
            continue;
          }
          out.enqueue(sse(event, type));
        }
      },
      flush(out) {
        if (reader.pending > 0) out.error(new EventStreamError("length"));
      },
    }),
  );
  const headers = new Headers(res.headers);
  headers.set("content-type", "text/event-stream; charset=utf-8");
  headers.delete("content-length");
  return new Response(body, { status: res.status, statusText: res.statusText, headers });
}
