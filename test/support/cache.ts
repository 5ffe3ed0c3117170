// Shared by the response cache's workerd tests: a caller with its own credential and namespace,
// the admin calls, and providers whose answers tell a replay from a fresh one.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import type { Flights } from "../../src/cache/flights";
import { allShards, type CacheShard } from "../../src/cache/object";
import type { CacheStats } from "../../src/cache/stats";
import { CHAT, chat, json, mockUpstream } from "./upstream";

export const TOKEN = "test-admin-token";
export const admin = (path: string, method = "GET") =>
  exports.default.fetch(`http://gateway${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
export const stats = async () => (await (await admin("/admin/cache")).json()) as CacheStats;
export const nsStats = async (ns: string) => (await stats()).namespaces.find((n) => n.namespace === ns);
/** Entries are stored after the answer has gone out (in waitUntil): wait until the index holds `n` in the namespace. */
export const stored = (ns: string, n = 1) => vi.waitFor(async () => expect((await nsStats(ns))?.entries ?? 0).toBe(n), { timeout: 5_000 });
/** Callers waiting in the shards now for someone else's upstream call (collapsed misses not yet answered). */
export async function waitingInShards(): Promise<number> {
  const each = await Promise.all(allShards(env.CACHE_SHARD).map((s) =>
    runInDurableObject(s, (o: CacheShard) => (o as unknown as { flights: Flights }).flights.waiting)));
  return each.reduce((a, b) => a + b, 0);
}
export const uid = () => crypto.randomUUID().slice(0, 8);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A caller with its own credential and namespace; `send` reads the answer whole. */
export function caller(extra: Record<string, string> = {}) {
  const ns = `t-${uid()}`;
  const key = `sk-cache-${uid()}`;
  const send = async (o: { headers?: Record<string, string>; body?: unknown; key?: string; path?: string } = {}) => {
    const res = await chat({ key: o.key ?? key, body: o.body, path: o.path, headers: { "x-slotgate-cache": "on", "x-slotgate-cache-namespace": ns, ...extra, ...o.headers } });
    return { res, text: await res.text(), cache: res.headers.get("x-slotgate-cache"), status: res.headers.get("cache-status") };
  };
  return { ns, key, send };
}

/** A provider answering each call with a numbered completion, so a replay is told from a fresh answer. */
export function numbered(delayMs = 0) {
  return mockUpstream(async (_, n) => {
    if (delayMs) await sleep(delayMs);
    return json({ ...CHAT, id: `chatcmpl-${n}` }, 200, { "x-ratelimit-remaining-requests": "7", "x-request-id": `req_${n}` });
  });
}

export const SSE = [
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":"stop"}]}\n\n',
  "data: [DONE]\n\n",
];
export const sse = (events: string[], fail = false) => {
  const enc = new TextEncoder();
  let i = 0;
  return new Response(new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < events.length) c.enqueue(enc.encode(events[i++]!));
      else if (fail) c.error(new Error("connection reset"));
      else c.close();
    },
  }), { headers: { "content-type": "text/event-stream" } });
};
export const STREAM_BODY = { model: "gpt-4o-mini", messages: [{ role: "user", content: "stream me" }], stream: true };

