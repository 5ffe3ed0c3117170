import type { Env } from "../env";
import { EventLog } from "./emit";
import { gatewayErrorEvent } from "./events";
import { consoleSink, parseLevel } from "./log";

/** Worker-made errors about a key that no limiter sees (the limiter counts its own queue_timeouts). */
const LOGGED = new Set(["limiter_unavailable", "upstream_unreachable"]);

/** One log per Worker isolate: its own rate bound, since isolates share nothing. */
let log: EventLog | null = null;

/**
 * After the proxy has its answer: one `gateway:error` line when the gateway itself failed the
 * request in a way that concerns the key, with the error's message (which host, and why: the
 * gateway's own words, proxy/unreachable.ts). Such an answer's body is the gateway's own small JSON,
 * so it is read here and the answer handed back whole; any other answer passes untouched, unread.
 */
export async function logGatewayError(env: Env, key: string, res: Response, now: number = Date.now()): Promise<Response> {
  const type = res.headers.get("x-slotgate-error");
  if (type === null || !LOGGED.has(type)) return res;
  const text = await res.text().catch(() => "");
  let message: unknown;
  try {
    message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
  } catch {}
  log ??= new EventLog(parseLevel(env.LOG_LEVEL), consoleSink, now);
  log.emit(key, [gatewayErrorEvent(type, res.status, Number(res.headers.get("x-slotgate-attempts") ?? 0), typeof message === "string" ? message : undefined)], now);
  return new Response(text, res);
}
