// What the gateway needs to know of a request body before it queues: its key, cost and whether
// the answer will stream. The parsed body is dropped here, so only the bytes wait in the queue.
import { estimateTokens } from "../policy/estimate";
import { type KeyParts, limitKey } from "../providers/key";
import type { Provider } from "../providers/table";
import { parseJson } from "./forward";

export interface Described {
  key: KeyParts;
  cost: number;
  /** The caller asked for a streamed answer: it is passed through as it comes, whatever its type. */
  stream: boolean;
  /** The body's own `model` field (a pool member maps it to a deployment), without the rest of the body. */
  body: { model?: unknown };
}

export async function describe(p: Provider, headers: Headers, url: URL, rest: string, bytes: Uint8Array, label: string | null): Promise<Described> {
  const json = parseJson(bytes);
  const key = await limitKey(p, headers, url, rest, json, label);
  const model = typeof json === "object" && json !== null ? (json as { model?: unknown }).model : undefined;
  return { key, cost: estimateTokens(json, bytes.byteLength), stream: asksToStream(json, rest, url.search), body: { model } };
}

/** OpenAI-style `"stream": true`, Gemini's `:streamGenerateContent` (SSE or not), `alt=sse`. */
export function asksToStream(json: unknown, rest: string, search: string): boolean {
  if (typeof json === "object" && json !== null && (json as { stream?: unknown }).stream === true) return true;
  return /:streamGenerateContent\b/i.test(rest) || /[?&]alt=sse\b/i.test(search);
}
