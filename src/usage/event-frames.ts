/**
 * @module Usage in a stream of binary event-stream frames (AWS's encoding, as Bedrock streams:
 * its dialect row's `usage.frames`), in the meter's one shape (`Tokens`): a tap that reads the
 * frames as they pass and never holds the stream back. A plain answer's usage is read by the
 * meter from the body and from the headers the row names (usage/header-usage.ts).
 *
 * Where Bedrock's streams put usage (docs.aws.amazon.com/bedrock/latest/APIReference/):
 * - InvokeModelWithResponseStream: `chunk` events whose payload is `{"bytes": "<base64>"}` of the
 *   model's own event (Anthropic's `message_start` / `message_delta` usage); the last one also carries
 *   the row's `frames.metrics` field (`amazon-bedrock-invocationMetrics` {inputTokenCount, outputTokenCount, ...}).
 * - ConverseStream: the `metadata` event's `usage` {inputTokens, outputTokens, cacheReadInputTokens,
 *   cacheWriteInputTokens} (API_runtime_TokenUsage). `inputTokens` leaves the cache's reads and writes
 *   out, as Anthropic's `input_tokens` does (userguide/prompt-caching.html): `tokensOf` adds them.
 * - Either stream may end in an exception event (`:message-type` `exception`, its name in
 *   `:exception-type`: throttlingException, modelStreamErrorException, ...; payload `{"message"}`).
 */
import type { UsageFrames } from "../providers/dialect";
import type { Tap } from "./stream";
import { EventStreamError, type EventMessage, type FrameFault, FrameReader } from "./eventstream";
import { merge, type Tokens, tokensOf, usageIn } from "./tokens";

const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
const obj = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** Tokens from counts that leave the cache out of `input`: the cache's reads and writes are added to it. */
function counted(input: number, output: number, cached: number, cacheWrite: number): Tokens {
  return { input: input + cached + cacheWrite, output, cached, cacheWrite };
}

/** Converse's (and ConverseStream's `metadata`) `usage`, or null. */
export function converseTokens(usage: unknown): Tokens | null {
  const u = obj(usage);
  return u && (typeof u.inputTokens === "number" || typeof u.outputTokens === "number") ? tokensOf(u) : null;
}

/** The invocation's totals a stream's last chunk carries (the row's `frames.metrics` field), or null. */
export function metricsTokens(metrics: unknown): Tokens | null {
  const m = obj(metrics);
  if (!m || (typeof m.inputTokenCount !== "number" && typeof m.outputTokenCount !== "number")) return null;
  return counted(n(m.inputTokenCount), n(m.outputTokenCount), n(m.cacheReadInputTokenCount), n(m.cacheWriteInputTokenCount));
}

/** What one event of a stream says: its usage, the model's own event (for a span), or the exception that ended the stream. */
export interface EventFacts {
  tokens: Tokens | null;
  json?: unknown;
  exception?: { type: string; message: string };
}

const b64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const text = new TextDecoder();

function parse(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(text.decode(bytes));
  } catch {
    return null;
  }
}

/** Reads one event of either stream; `metrics`: the field of a chunk's inner JSON that holds the invocation's totals. */
export function eventFacts(m: EventMessage, metrics?: string): EventFacts {
  const payload = parse(m.payload);
  if (m.headers[":message-type"] === "exception") {
    const message = obj(payload)?.message;
    return { tokens: null, exception: { type: String(m.headers[":exception-type"] ?? "unknown"), message: typeof message === "string" ? message : "" } };
  }
  const type = m.headers[":event-type"];
  if (type === "metadata") return { tokens: converseTokens(obj(payload)?.usage), json: payload };
  if (type !== "chunk") return { tokens: null, json: payload };
  const bytes = obj(payload)?.bytes;
  let inner: unknown = null;
  try {
    inner = typeof bytes === "string" ? parse(b64(bytes)) : null;
  } catch {}
  return { tokens: merge(usageIn(inner), metrics ? metricsTokens(obj(inner)?.[metrics]) : null), json: inner };
}

/** A tap of an event stream: the meter's `Tap`, and what ended the stream. */
export interface EventStreamTap extends Tap {
  /** The exception event the stream ended with, if any. */
  exception(): { type: string; message: string } | null;
  /** Why the frames could not be read (their bytes still passed through untouched), or null. */
  fault(): FrameFault | null;
}

/**
 * Passes `body` through byte for byte and reads its frames as they pass, holding at most one
 * frame. A frame that fails its checksum stops the reading, never the stream: the caller's SDK
 * sees the same bytes and judges them itself. `onJson`: told each model event (a span reads it).
 */
export function tapEventStream(body: ReadableStream<Uint8Array>, frames: UsageFrames, onJson?: (json: unknown) => void): EventStreamTap {
  const reader = new FrameReader();
  let seen: Tokens | null = null;
  let exception: { type: string; message: string } | null = null;
  let fault: FrameFault | null = null;
  let ended = false;
  const t = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      out.enqueue(chunk);
      if (fault) return;
      try {
        for (const m of reader.push(chunk)) {
          const f = eventFacts(m, frames.metrics);
          seen = merge(seen, f.tokens);
          exception = f.exception ?? exception;
          if (f.json !== undefined && onJson) onJson(f.json);
        }
      } catch (e) {
        if (!(e instanceof EventStreamError)) throw e;
        fault = e.fault;
      }
    },
    flush() {
      ended = true;
      // A stream that stops inside a frame was cut short.
      if (!fault && reader.pending > 0) fault = "length";
    },
  });
  return { body: body.pipeThrough(t), tokens: () => seen, whole: () => ended && fault === null, exception: () => exception, fault: () => fault };
}
