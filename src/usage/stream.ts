// Reads the usage out of a streamed answer as it passes, without holding it back. Pure streams.
import { USAGE_AT } from "../providers/dialect";
import { merge, type Tokens, tokensOf, usageIn } from "./tokens";

/** A non-SSE stream (Gemini's JSON array) is searched at its end: this much of its tail is kept. */
const TAIL_CHARS = 64 * 1024;

export interface Tap {
  body: ReadableStream<Uint8Array>;
  /** The usage seen so far: final once the body has ended; null while none was seen. */
  tokens(): Tokens | null;
  /** Whether the body ended whole (false: the caller left, or the stream broke, before its end). */
  whole(): boolean;
}

/**
 * The usage chunk of an OpenAI stream the gateway asked for (`stream_options.include_usage`):
 * no choices, a usage object. A caller who did not ask never sees it.
 */
const isUsageChunk = (json: unknown) => {
  const o = json as { choices?: unknown; usage?: unknown } | null;
  return !!o && Array.isArray(o.choices) && o.choices.length === 0 && typeof o.usage === "object" && o.usage !== null;
};

/**
 * Passes `body` through and notes each usage it carries. `sse`: read it event by event (the
 * `data:` lines); otherwise (a JSON array, NDJSON) the last usage object in its tail is read when
 * it ends. `onJson`: told each event it parsed (a span reads the model from them). `at`: where
 * the dialect puts usage in an event. `strip`: drop the usage chunk the gateway asked for; the stream is then passed on
 * whole events at a time (a chunk's bytes wait for the end of their event), else chunks pass untouched.
 */
export function tapStream(body: ReadableStream<Uint8Array>, sse: boolean, strip: boolean, onJson?: (json: unknown) => void, at = USAGE_AT): Tap {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let seen: Tokens | null = null;
  let buf = "";
  let event = "";
  let drop = false;
  let ended = false;

  /** Notes a line's usage; returns whether it is the usage chunk to strip. */
  const note = (trimmed: string): boolean => {
    if (!trimmed.startsWith("data:") || !trimmed.includes("sage")) return false;
    let json: unknown;
    try {
      json = JSON.parse(trimmed.slice(5));
    } catch {
      return false;
    }
    seen = merge(seen, usageIn(json, at));
    onJson?.(json);
    return strip && isUsageChunk(json);
  };

  const line = (text: string, out: TransformStreamDefaultController<Uint8Array>) => {
    const trimmed = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (note(trimmed)) drop = true;
    if (!strip) return;
    event += `${text}\n`;
    if (trimmed !== "") return;
    if (!drop) out.enqueue(encoder.encode(event));
    event = "";
    drop = false;
  };

  const lines = (out: TransformStreamDefaultController<Uint8Array>) => {
    let from = 0;
    for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n", from)) {
      line(buf.slice(from, i), out);
      from = i + 1;
    }
    buf = buf.slice(from);
  };

  const tail = () => {
    if (buf.length > TAIL_CHARS * 2) buf = buf.slice(-TAIL_CHARS);
  };

  const t = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      if (!strip) out.enqueue(chunk);
      buf += decoder.decode(chunk, { stream: true });
      if (sse) lines(out);
      else tail();
    },
    flush(out) {
      ended = true;
      buf += decoder.decode();
      if (!sse) {
        seen = merge(seen, lastUsage(buf, at));
        return;
      }
      // An event the stream ended inside: passed on as it came, unless it is the usage chunk.
      const last = buf !== "" && note(buf.endsWith("\r") ? buf.slice(0, -1) : buf);
      const rest = event + buf;
      if (strip && !drop && !last && rest !== "") out.enqueue(encoder.encode(rest));
    },
  });
  return { body: body.pipeThrough(t), tokens: () => seen, whole: () => ended };
}

/** The last usage object in some JSON text, by the names `paths` (the dialect's) end in (`"usage"`, `"usageMetadata"`), or null. */
export function lastUsage(text: string, paths: readonly (readonly string[])[] = USAGE_AT): Tokens | null {
  const at = Math.max(...new Set(paths.map((p) => text.lastIndexOf(`"${p.at(-1)}"`))));
  if (at < 0) return null;
  const open = text.indexOf("{", at);
  if (open < 0) return null;
  let depth = 0;
  let inString = false;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) {
      try {
        return tokensOf(JSON.parse(text.slice(open, i + 1)));
      } catch {
        return null;
      }
    }
  }
  return null;
}
