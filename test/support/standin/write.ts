// Writing an answer out: waits that end when the caller leaves, streams chunk by chunk, and a
// connection held open with keep-alive lines before the answer (DeepSeek).
import type { ServerResponse } from "node:http";
import type { Dialect, StreamPlan } from "./dialect.ts";
import { encodeSse } from "./dialect.ts";

type Headers = Record<string, string>;

/** Resolves after `ms`, or at once when the caller has gone. */
export function sleep(ms: number, res: ServerResponse): Promise<void> {
  if (ms <= 0 || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.on("close", done);
  });
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" };

/**
 * Waits `heldMs` before the answer starts. With the dialect's keep-alive, the answer's headers go
 * out at once and a keep-alive line every `everyMs` (a blank line before a plain body, a comment
 * before a stream): returns true when the head was written.
 */
export async function holdOpen(res: ServerResponse, dialect: Dialect, stream: boolean, headers: Headers, heldMs: number, everyMs: number): Promise<boolean> {
  if (!dialect.keepAlive) {
    await sleep(heldMs, res);
    return false;
  }
  if (res.destroyed) return false;
  res.writeHead(200, { ...headers, ...(stream ? SSE_HEADERS : { "content-type": "application/json" }) });
  const line = stream ? dialect.keepAlive.stream : dialect.keepAlive.plain;
  for (let left = heldMs; left > 0 && !res.destroyed; left -= everyMs) {
    res.write(line);
    await sleep(Math.min(everyMs, left), res);
  }
  return true;
}

/** Writes `head` after one share of the latency, each delta after another, then `tail`. */
export async function writeStream(res: ServerResponse, plan: StreamPlan, totalMs: number, headers: Headers, eol = "\n", opened = false): Promise<void> {
  const gap = totalMs / (plan.deltas.length + 1);
  const encode = (e: StreamPlan["head"][number]) => encodeSse(e, eol);
  await sleep(gap, res);
  if (res.destroyed) return;
  if (!opened) res.writeHead(200, { ...headers, ...SSE_HEADERS });
  res.write(plan.head.map(encode).join(""));
  for (const delta of plan.deltas) {
    await sleep(gap, res);
    if (res.destroyed) return;
    res.write(encode(delta));
  }
  res.end(plan.tail.map(encode).join(""));
}
